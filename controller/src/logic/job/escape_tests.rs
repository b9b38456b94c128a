//! Unit tests of `logic/job/escape.rs`.

use super::*;

fn visible(s: &str) -> String {
    s.replace(ZWSP, "")
}

#[test]
fn text_is_inert() {
    let cases = [
        ("Coffee Shop", "Coffee Shop"),
        (
            "<!-- ledgerops:agentjob:aj-1 -->",
            "&lt;\\!\u{200B}\\-\\- ledgerops\\:agentjob\\:aj\\-1 \\-\\-&gt;",
        ),
        ("@bob please", "@\u{200B}bob please"),
        (
            "[x](https://e.vil)",
            "\\[x\\]\\(https\\:\u{200B}//e\\.vil\\)",
        ),
        ("![i](u)", "\\!\u{200B}\\[i\\]\\(u\\)"),
        ("# Title\n* item", "\\#\u{200B} Title \\* item"),
        ("a | b", "a \\| b"),
        ("fix #12", "fix \\#\u{200B}12"),
        ("a\\`b`", "a\\\\\\`b\\`"),
        ("x&amp;y", "x&amp;amp;y"),
        ("bell\u{7}", "bell"),
    ];
    for (input, want) in cases {
        assert_eq!(text(input), want, "{input:?}");
    }
}

#[test]
fn code_spans_cannot_be_closed_and_never_mention() {
    let cases = [
        ("/agent status", "`/agent status`"),
        ("/agent x`<b>`y", "`/agent x'<b>'y`"),
        ("/agent help @admin", "`/agent help @\u{200B}admin`"),
        ("a\nb", "`a b`"),
        ("", "` `"),
        ("``", "`''`"),
    ];
    for (input, want) in cases {
        assert_eq!(code(input), want, "{input:?}");
    }
}

#[test]
fn blocks_use_a_longer_fence_than_the_text() {
    let cases = [
        ("plain error", "```text\nplain error\n```"),
        ("has ``` inside", "````text\nhas ``` inside\n````"),
        ("ping @root\n", "```text\nping @\u{200B}root\n```"),
    ];
    for (input, want) in cases {
        assert_eq!(block(input), want, "{input:?}");
    }
}

#[test]
fn mentions_only_plain_logins() {
    let cases = [
        ("writer", "@writer"),
        ("first.last-2_x", "@first.last-2_x"),
        ("<!-- x -->", "&lt;\\!\u{200B}\\-\\- x \\-\\-&gt;"),
        ("a b", "a b"),
        ("", ""),
    ];
    for (input, want) in cases {
        assert_eq!(mention(input), want, "{input:?}");
        assert_eq!(visible(&mention(input)).is_empty(), input.is_empty());
    }
}
