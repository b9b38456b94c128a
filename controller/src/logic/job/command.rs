//! `/agent` command syntax. Parsed only after the commenter's permission is granted, so that an
//! unauthorized malformed command gets the permission message, never syntax details.

/// A parsed `/agent` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Describe every command.
    Help,
    /// Waiting approvals, Diverged or Blocked Transactions, Budget health.
    Status,
    /// Approve an ApprovalRequest, with an optional comment. Without a name, on a pull request:
    /// the previews the bot commented there before the command.
    Approve {
        request: Option<String>,
        comment: Option<String>,
        /// `except tx-1, tx-2=Groceries`: the approver's edits, category names as typed.
        except: Vec<Exception>,
    },
    /// Reject an ApprovalRequest; the reason is required.
    Reject { request: String, reason: String },
    /// Suggest categories for uncategorized transactions of a month (`YYYY-MM`), or of all.
    Suggest { month: Option<String> },
    /// Open a pull request with the undo of an applied CategorizationPlan.
    Undo { plan: String },
    /// List the CategorizationRules: Candidates (most confirmed first), Blessed, Demoted.
    Rules,
}

impl Command {
    /// The command's name, as recorded in the AgentJob's status.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Help => "help",
            Command::Status => "status",
            Command::Approve { .. } => "approve",
            Command::Reject { .. } => "reject",
            Command::Suggest { .. } => "suggest",
            Command::Undo { .. } => "undo",
            Command::Rules => "rules",
        }
    }
}

/// One line the approver changes: left out, or (with a category) put in that category.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exception {
    pub transaction_id: String,
    /// The category's name (or `Group/Name`, or id) as typed; `None` drops the line.
    pub category: Option<String>,
}

/// The most lines one `except` lists.
const MAX_EXCEPTIONS: usize = 100;

/// What `/agent help` answers, and what a malformed command is rejected with.
pub const HELP: &str = "\
| command | what it does |
|---|---|
| `/agent help` | shows this list |
| `/agent status` | waiting approvals, Diverged or Blocked Transactions, Budget health |
| `/agent approve <approvalrequest> [comment]` | approves the request as `gitea:<your login>` |
| `/agent approve <approvalrequest> except tx-1, tx-2=Groceries` | approves a plan without tx-1 and with tx-2 in Groceries; a comment may follow on the next lines |
| `/agent approve` | on a ConfigRepo's pull request: approves the preview ledgerops commented before |
| `/agent reject <approvalrequest> <reason>` | rejects the request; the reason is required |
| `/agent suggest [YYYY-MM]` | opens a pull request with a CategorizationPlan for uncategorized transactions |
| `/agent undo <plan>` | opens a pull request with a plan that reverts the applied plan |
| `/agent rules` | lists the CategorizationRules with their confirmations, Candidates first |

Commands need write permission on this repository.";

/// Why a command could not be parsed. The message is shown to the commenter, followed by
/// [`HELP`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CommandError(pub String);

/// Parses a comment that starts with `/agent`. The first line holds the command and its
/// arguments; for `approve` and `reject` the rest of the comment continues the comment or reason.
pub fn parse(text: &str) -> Result<Command, CommandError> {
    let text = text.trim();
    let rest = text
        .strip_prefix("/agent")
        .ok_or_else(|| CommandError("a command starts with `/agent`".into()))?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return Err(CommandError(format!(
            "unknown command {}",
            first_word(text)
        )));
    }
    let (first_line, more) = match rest.split_once('\n') {
        Some((line, more)) => (line, more.trim()),
        None => (rest, ""),
    };
    let mut words = first_line.split_whitespace();
    let Some(name) = words.next() else {
        return Err(CommandError("no command given after `/agent`".into()));
    };
    let args: Vec<&str> = words.collect();
    let free_text = |from: usize| -> Option<String> {
        let mut parts: Vec<String> = Vec::new();
        if args.len() > from {
            parts.push(args[from..].join(" "));
        }
        if !more.is_empty() {
            parts.push(more.to_owned());
        }
        let joined = parts.join("\n");
        (!joined.trim().is_empty()).then_some(joined)
    };
    match name {
        "help" => no_args(name, &args).map(|()| Command::Help),
        "status" => no_args(name, &args).map(|()| Command::Status),
        "rules" => no_args(name, &args).map(|()| Command::Rules),
        "approve" => {
            // Alone on its line, it answers the preview shown on the pull request; the comment
            // may follow on the next lines.
            let request = match args.first() {
                None => None,
                Some(_) => Some(object_name(name, "<approvalrequest>", args.first())?),
            };
            if args.get(1) == Some(&"except") {
                // The list is the rest of the first line (names may hold spaces); a comment
                // may follow on the next lines.
                let except = exceptions(after_words(first_line, 3))?;
                let comment = (!more.is_empty()).then(|| more.to_owned());
                check_length(comment.as_deref())?;
                return Ok(Command::Approve {
                    request,
                    comment,
                    except,
                });
            }
            if args.first() == Some(&"except") {
                return Err(CommandError(
                    "`/agent approve except …` needs the request's name first: `/agent approve <approvalrequest> except tx-1, tx-2=Groceries`".into(),
                ));
            }
            let comment = free_text(1);
            check_length(comment.as_deref())?;
            Ok(Command::Approve {
                request,
                comment,
                except: Vec::new(),
            })
        }
        "reject" => {
            let request = object_name(name, "<approvalrequest>", args.first())?;
            let reason = free_text(1).ok_or_else(|| {
                CommandError("`/agent reject` needs a reason after the request name".into())
            })?;
            check_length(Some(&reason))?;
            Ok(Command::Reject { request, reason })
        }
        "suggest" => match args.as_slice() {
            [] => Ok(Command::Suggest { month: None }),
            [month] if is_month(month) => Ok(Command::Suggest {
                month: Some((*month).to_owned()),
            }),
            [other] => Err(CommandError(format!(
                "{} is not a month: write it as YYYY-MM, e.g. 2026-07",
                clip(other)
            ))),
            _ => Err(CommandError(
                "`/agent suggest` takes at most one argument, a month YYYY-MM".into(),
            )),
        },
        "undo" => {
            if args.len() > 1 {
                return Err(CommandError(
                    "`/agent undo` takes exactly one argument, the plan's name".into(),
                ));
            }
            let plan = object_name(name, "<plan>", args.first())?;
            Ok(Command::Undo { plan })
        }
        other => Err(CommandError(format!("unknown command {}", clip(other)))),
    }
}

/// What follows the first `n` words of `line`.
fn after_words(line: &str, n: usize) -> &str {
    let mut rest = line.trim_start();
    for _ in 0..n {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = rest[end..].trim_start();
    }
    rest
}

/// `tx-1, tx-2=Groceries`: lines to drop, and lines with the category to put them in.
fn exceptions(list: &str) -> Result<Vec<Exception>, CommandError> {
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if items.iter().all(|i| i.is_empty()) {
        return Err(CommandError(
            "`except` lists no transaction: write `except tx-1, tx-2=Groceries`".into(),
        ));
    }
    if items.len() > MAX_EXCEPTIONS {
        return Err(CommandError(format!(
            "`except` lists {} transactions; at most {MAX_EXCEPTIONS} fit in one command",
            items.len()
        )));
    }
    items
        .into_iter()
        .map(|item| {
            let (tx, category) = match item.split_once('=') {
                Some((tx, c)) => (tx.trim(), Some(c.trim())),
                None => (item, None),
            };
            let id_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
            if tx.is_empty() || tx.len() > 64 || !tx.chars().all(id_char) {
                return Err(CommandError(format!(
                    "{} is not a transaction id: write `except tx-1, tx-2=Groceries`",
                    clip(item)
                )));
            }
            if category.is_some_and(|c| c.is_empty() || c.chars().count() > 100) {
                return Err(CommandError(format!(
                    "{} names no category after `=`",
                    clip(item)
                )));
            }
            Ok(Exception {
                transaction_id: tx.to_owned(),
                category: category.map(str::to_owned),
            })
        })
        .collect()
}

fn first_word(text: &str) -> String {
    clip(text.split_whitespace().next().unwrap_or_default())
}

/// Untrusted text quoted back to the commenter: short, as an escaped code span.
fn clip(word: &str) -> String {
    super::escape::code(&word.chars().take(40).collect::<String>())
}

fn no_args(name: &str, args: &[&str]) -> Result<(), CommandError> {
    if args.is_empty() {
        Ok(())
    } else {
        Err(CommandError(format!("`/agent {name}` takes no arguments")))
    }
}

fn object_name(command: &str, what: &str, arg: Option<&&str>) -> Result<String, CommandError> {
    let Some(arg) = arg else {
        return Err(CommandError(format!(
            "`/agent {command}` needs {what}, the name of the object"
        )));
    };
    if is_dns_subdomain(arg) {
        Ok((*arg).to_owned())
    } else {
        Err(CommandError(format!(
            "{} is not a valid Kubernetes object name",
            clip(arg)
        )))
    }
}

fn check_length(text: Option<&str>) -> Result<(), CommandError> {
    match text {
        Some(t) if t.chars().count() > 1000 => Err(CommandError(
            "the comment or reason is longer than 1000 characters".into(),
        )),
        _ => Ok(()),
    }
}

/// A Kubernetes object name: lower-case alphanumerics, `-` and `.`, at most 253 characters,
/// starting and ending with an alphanumeric.
pub fn is_dns_subdomain(s: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= 253
        && s.chars().all(|c| ok_char(c) || c == '-' || c == '.')
        && s.chars().next().is_some_and(ok_char)
        && s.chars().last().is_some_and(ok_char)
}

fn is_month(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 7
        && b[4] == b'-'
        && b[..4].iter().chain(&b[5..]).all(u8::is_ascii_digit)
        && matches!(s[5..].parse::<u8>(), Ok(1..=12))
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
