//! Unit tests of `logic/job/command.rs`.

use super::*;

#[test]
fn parses_every_command() {
    let cases = [
        ("/agent help", Command::Help),
        ("  /agent status  ", Command::Status),
        (
            "/agent approve apr-1",
            Command::Approve {
                request: Some("apr-1".into()),
                comment: None,
                except: vec![],
            },
        ),
        (
            "/agent approve",
            Command::Approve {
                request: None,
                comment: None,
                except: vec![],
            },
        ),
        (
            "/agent approve\nchecked the receipts",
            Command::Approve {
                request: None,
                comment: Some("checked the receipts".into()),
                except: vec![],
            },
        ),
        (
            "/agent approve apr-1 looks right",
            Command::Approve {
                request: Some("apr-1".into()),
                comment: Some("looks right".into()),
                except: vec![],
            },
        ),
        (
            "/agent approve apr-1 except tx-1,  tx-2 = Dining Out ,tx-3\nthe rest is right",
            Command::Approve {
                request: Some("apr-1".into()),
                comment: Some("the rest is right".into()),
                except: vec![
                    Exception {
                        transaction_id: "tx-1".into(),
                        category: None,
                    },
                    Exception {
                        transaction_id: "tx-2".into(),
                        category: Some("Dining Out".into()),
                    },
                    Exception {
                        transaction_id: "tx-3".into(),
                        category: None,
                    },
                ],
            },
        ),
        (
            "/agent reject apr-2 wrong month\nsee the receipt",
            Command::Reject {
                request: "apr-2".into(),
                reason: "wrong month\nsee the receipt".into(),
            },
        ),
        ("/agent suggest", Command::Suggest { month: None }),
        (
            "/agent suggest 2026-07",
            Command::Suggest {
                month: Some("2026-07".into()),
            },
        ),
        (
            "/agent undo plan-a",
            Command::Undo {
                plan: "plan-a".into(),
            },
        ),
        ("/agent rules", Command::Rules),
    ];
    for (text, expected) in cases {
        assert_eq!(parse(text), Ok(expected), "{text}");
    }
}

#[test]
fn refuses_malformed_commands_with_a_reason() {
    let cases = [
        ("/agent", "no command given"),
        ("/agent   \n", "no command given"),
        ("/agentx status", "unknown command `/agentx`"),
        ("/agent deploy", "unknown command `deploy`"),
        ("/agent status now", "takes no arguments"),
        ("/agent help me", "takes no arguments"),
        ("/agent rules all", "takes no arguments"),
        (
            "/agent approve Bad_Name",
            "not a valid Kubernetes object name",
        ),
        ("/agent reject apr-1", "needs a reason"),
        ("/agent approve apr-1 except", "lists no transaction"),
        ("/agent approve apr-1 except ,", "lists no transaction"),
        (
            "/agent approve apr-1 except tx 1",
            "is not a transaction id",
        ),
        ("/agent approve apr-1 except tx-1=", "names no category"),
        (
            "/agent approve except tx-1",
            "needs the request's name first",
        ),
        ("/agent suggest july", "not a month"),
        ("/agent suggest 2026-13", "not a month"),
        ("/agent suggest 2026-07 2026-08", "at most one argument"),
        ("/agent undo", "needs <plan>"),
        ("/agent undo a b", "exactly one argument"),
        ("status", "starts with `/agent`"),
    ];
    for (text, expected) in cases {
        let err = parse(text).unwrap_err();
        assert!(err.0.contains(expected), "{text}: {err}");
    }
}

#[test]
fn names_and_months() {
    assert!(is_dns_subdomain("apr-2026.07"));
    assert!(!is_dns_subdomain("-apr"));
    assert!(!is_dns_subdomain("apr-"));
    assert!(!is_dns_subdomain(""));
    assert!(is_month("2026-01") && is_month("2026-12"));
    assert!(!is_month("2026-00") && !is_month("26-01") && !is_month("2026/01"));
}
