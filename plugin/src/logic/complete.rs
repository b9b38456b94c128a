//! What `kubectl ledgerops <TAB>` offers. kubectl (1.26 and later) completes a plugin by running
//! `kubectl_complete-<plugin>` from PATH with the words typed after the plugin's name, the last
//! one being the word to complete (empty for a new word), and reads cobra's format back: one
//! candidate a line (`value<TAB>description`), then `:<directive>`. The words come from the
//! command line that clap parses ([`crate::cli::Cli`]), so a new flag or command completes without
//! more code; only the names that must be read from the cluster are listed here.

use clap::{Arg, Command};

/// cobra's ShellCompDirective bits.
pub mod directive {
    /// The shell may fall back to completing file names.
    pub const DEFAULT: u32 = 0;
    /// No file names: only the candidates.
    pub const NO_FILE_COMP: u32 = 4;
    /// File names with the candidates as extensions.
    pub const FILTER_FILE_EXT: u32 = 8;
}

/// Names that only the cluster or the kubeconfig knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// ApprovalRequests waiting for a decision (`approve`, `reject`).
    WaitingRequests,
    /// ApprovalRequests and CategorizationPlans (`show`).
    RequestsAndPlans,
    /// CategorizationPlans (`diff`, `undo`).
    Plans,
    /// Diverged Transactions (`resolve`).
    DivergedTransactions,
    /// Budgets (`sync`).
    Budgets,
    /// Namespaces (`-n`).
    Namespaces,
    /// The kubeconfig's contexts (`--context`).
    Contexts,
}

/// The connection flags typed so far, for a lookup to read the cluster kubectl ledgerops will.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Typed {
    pub kubeconfig: Option<String>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    pub as_user: Option<String>,
}

/// What to offer for the word being completed.
#[derive(Debug, PartialEq, Eq)]
pub struct Completion {
    /// Fixed candidates, each with a description (possibly empty).
    pub candidates: Vec<(String, String)>,
    /// Names to read, offered after the candidates.
    pub lookup: Option<Lookup>,
    pub directive: u32,
    /// Put before each candidate in the answer (`--output=` when completing `--output=js`).
    pub prefix: String,
    /// What is typed of the value: candidates are those that start with it.
    pub partial: String,
    pub typed: Typed,
}

/// The completion of the last of `words` (the words after `kubectl ledgerops`) with the command
/// line `cli`.
pub fn complete(cli: &Command, words: &[String]) -> Completion {
    let (current, before) = match words.split_last() {
        Some((last, before)) => (last.as_str(), before),
        None => ("", &[][..]),
    };
    let mut typed = Typed::default();
    let mut subcommand: Option<&Command> = None;
    let mut positionals = 0;
    // The flag whose value the current word is, when the word before it was such a flag.
    let mut pending: Option<&Arg> = None;
    for word in before {
        if let Some(arg) = pending.take() {
            record(&mut typed, arg, word);
            continue;
        }
        if word.starts_with('-') && word.len() > 1 {
            let (arg, inline) = flag(cli, subcommand, word);
            match (arg, inline) {
                (Some(arg), Some(value)) => record(&mut typed, arg, &value),
                (Some(arg), None) if takes_value(arg) => pending = Some(arg),
                _ => {}
            }
        } else if subcommand.is_some() {
            positionals += 1;
        } else {
            match cli.find_subcommand(word) {
                Some(sub) => subcommand = Some(sub),
                // Not a command of ours: nothing sensible follows.
                None => return nothing(typed),
            }
        }
    }
    let mut answer = Completion {
        candidates: vec![],
        lookup: None,
        directive: directive::NO_FILE_COMP,
        prefix: String::new(),
        partial: current.to_owned(),
        typed,
    };
    if let Some(arg) = pending {
        values(&mut answer, arg, subcommand);
    } else if current.starts_with("--") && current.contains('=') {
        let (name, value) = current.split_once('=').unwrap_or_default();
        if let (Some(arg), _) = flag(cli, subcommand, name) {
            answer.prefix = format!("{name}=");
            answer.partial = value.to_owned();
            values(&mut answer, arg, subcommand);
        }
    } else if current.starts_with('-') {
        answer.candidates = flags(cli, subcommand);
    } else if let Some(sub) = subcommand {
        if let Some(arg) = sub.get_positionals().nth(positionals) {
            values(&mut answer, arg, subcommand);
        }
    } else {
        answer.candidates = cli
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| (s.get_name().to_owned(), about(s)))
            .collect();
    }
    answer
}

/// The answer's lines: the candidates (fixed, then `names`) that start with what is typed, then
/// the directive.
pub fn render(answer: &Completion, names: &[(String, String)]) -> String {
    let mut out = String::new();
    for (value, description) in answer.candidates.iter().chain(names) {
        // An extension filter's candidates are the extensions, whatever the word typed.
        if answer.directive != directive::FILTER_FILE_EXT && !value.starts_with(&answer.partial) {
            continue;
        }
        out.push_str(&answer.prefix);
        out.push_str(value);
        // A tab or newline inside a description would break the format.
        let description: String = description
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if !description.trim().is_empty() {
            out.push('\t');
            out.push_str(description.trim());
        }
        out.push('\n');
    }
    out.push_str(&format!(":{}\n", answer.directive));
    out
}

fn nothing(typed: Typed) -> Completion {
    Completion {
        candidates: vec![],
        lookup: None,
        directive: directive::NO_FILE_COMP,
        prefix: String::new(),
        partial: String::new(),
        typed,
    }
}

/// The flag `word` names among the subcommand's and the global ones, and its value when given
/// in the same word (`--context=x`, `-nfoo`).
fn flag<'a>(
    cli: &'a Command,
    subcommand: Option<&'a Command>,
    word: &str,
) -> (Option<&'a Arg>, Option<String>) {
    let mut args = cli.get_arguments().chain(
        subcommand
            .into_iter()
            .flat_map(|s| s.get_arguments())
            .filter(|a| !a.is_positional()),
    );
    if let Some(long) = word.strip_prefix("--") {
        let (name, value) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (long, None),
        };
        return (args.find(|a| a.get_long() == Some(name)), value);
    }
    let mut chars = word.chars().skip(1);
    let short = chars.next();
    let rest: String = chars.collect();
    let arg = args.find(|a| a.get_short() == short);
    let value = arg
        .filter(|a| takes_value(a) && !rest.is_empty())
        .map(|_| rest);
    (arg, value)
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

/// Remembers the connection flags.
fn record(typed: &mut Typed, arg: &Arg, value: &str) {
    let slot = match arg.get_id().as_str() {
        "kubeconfig" => &mut typed.kubeconfig,
        "context" => &mut typed.context,
        "namespace" => &mut typed.namespace,
        "as_user" => &mut typed.as_user,
        _ => return,
    };
    *slot = Some(value.to_owned());
}

/// The long flags (short when it has none) of the subcommand and the global ones.
fn flags(cli: &Command, subcommand: Option<&Command>) -> Vec<(String, String)> {
    cli.get_arguments()
        .chain(subcommand.into_iter().flat_map(|s| s.get_arguments()))
        .filter(|a| !a.is_positional() && !a.is_hide_set())
        .filter_map(|a| {
            let name = match (a.get_long(), a.get_short()) {
                (Some(long), _) => format!("--{long}"),
                (None, Some(short)) => format!("-{short}"),
                (None, None) => return None,
            };
            Some((name, help(a)))
        })
        .collect()
}

/// The values of `arg`: its fixed ones, names from the cluster, or file names.
fn values(answer: &mut Completion, arg: &Arg, subcommand: Option<&Command>) {
    let fixed: Vec<(String, String)> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| {
            let help = v.get_help().map(|h| h.to_string()).unwrap_or_default();
            (v.get_name().to_owned(), help)
        })
        .collect();
    if !fixed.is_empty() {
        answer.candidates = fixed;
        return;
    }
    let command = subcommand.map(Command::get_name).unwrap_or_default();
    answer.lookup = match (command, arg.get_id().as_str()) {
        (_, "namespace") => Some(Lookup::Namespaces),
        (_, "context") => Some(Lookup::Contexts),
        (_, "kubeconfig") => {
            answer.directive = directive::DEFAULT;
            None
        }
        ("apply", "files") => {
            answer.directive = directive::FILTER_FILE_EXT;
            answer.candidates = ["yaml", "yml", "json"]
                .map(|e| (e.to_owned(), String::new()))
                .into();
            None
        }
        ("approve" | "reject", "request") => Some(Lookup::WaitingRequests),
        ("show", "name") => Some(Lookup::RequestsAndPlans),
        ("diff" | "undo", "plan") => Some(Lookup::Plans),
        ("resolve", "transaction") => Some(Lookup::DivergedTransactions),
        ("sync", "budget") => Some(Lookup::Budgets),
        // Free text (a message, a duration, a user): nothing to offer.
        _ => None,
    };
}

fn about(command: &Command) -> String {
    command
        .get_about()
        .map(|a| first_sentence(&a.to_string()))
        .unwrap_or_default()
}

fn help(arg: &Arg) -> String {
    arg.get_help()
        .map(|h| first_sentence(&h.to_string()))
        .unwrap_or_default()
}

/// Descriptions are shown beside the candidates, so short: the first line, up to its first
/// full stop or colon.
fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let end = [". ", ": "]
        .iter()
        .filter_map(|stop| line.find(stop))
        .min()
        .unwrap_or(line.len());
    line[..end].trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;

    fn at(words: &[&str]) -> Completion {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        complete(&Cli::command(), &words)
    }

    fn offered(words: &[&str]) -> Vec<String> {
        let answer = at(words);
        render(&answer, &[])
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn a_new_word_offers_the_commands_with_their_description_then_the_directive() {
        let answer = at(&[""]);
        let text = render(&answer, &[]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines.contains(&"queue\tThe ApprovalRequests waiting for a person, oldest first"),
            "{text}"
        );
        for command in [
            "apply",
            "approve",
            "reject",
            "diff",
            "undo",
            "status",
            "completion",
        ] {
            assert!(
                lines.iter().any(|l| l.starts_with(&format!("{command}\t"))),
                "{command} in {text}"
            );
        }
        assert_eq!(lines.last(), Some(&":4"), "no file names: {text}");
        assert!(
            lines.contains(&"apply\tPropose what the files declare (Transactions, plans, rules, Budgets, ConfigRepos), in your own name"),
            "{text}"
        );
        assert!(lines.iter().all(|l| l.split('\t').count() <= 2), "{text}");
    }

    #[test]
    fn what_is_typed_filters_the_candidates() {
        assert_eq!(offered(&["re"]), ["reject", "resolve", "resume", ":4"]);
        assert_eq!(offered(&["approve", "--y"]), ["--yes", ":4"]);
    }

    #[test]
    fn flags_are_the_commands_and_the_global_ones() {
        let flags = offered(&["approve", "-"]);
        for flag in [
            "--message",
            "--yes",
            "--wait",
            "--namespace",
            "--context",
            "--output",
        ] {
            assert!(flags.iter().any(|f| f == flag), "{flag} in {flags:?}");
        }
        assert!(!flags.iter().any(|f| f == "--filename"), "{flags:?}");
    }

    #[test]
    fn fixed_values_complete_from_the_command_line() {
        assert_eq!(
            offered(&["queue", "-o", ""]),
            ["table", "json", "yaml", "name", ":4"]
        );
        assert_eq!(offered(&["queue", "--output=y"]), ["--output=yaml", ":4"]);
        assert_eq!(
            offered(&["resolve", "bakery", ""]),
            ["ours", "theirs", ":4"]
        );
        assert!(offered(&["completion", ""]).contains(&"zsh".to_owned()));
    }

    #[test]
    fn names_are_looked_up_by_what_the_command_takes() {
        for (words, lookup) in [
            (&["approve", ""][..], Lookup::WaitingRequests),
            (
                &["-n", "home", "reject", "sep"][..],
                Lookup::WaitingRequests,
            ),
            (&["show", ""][..], Lookup::RequestsAndPlans),
            (&["diff", ""][..], Lookup::Plans),
            (&["undo", "--wait", "5s", ""][..], Lookup::Plans),
            (&["resolve", ""][..], Lookup::DivergedTransactions),
            (&["sync", ""][..], Lookup::Budgets),
            (&["queue", "-n", ""][..], Lookup::Namespaces),
            (&["--context", ""][..], Lookup::Contexts),
        ] {
            assert_eq!(at(words).lookup, Some(lookup), "{words:?}");
        }
        // The second word of approve, a message and a duration are not names.
        for words in [
            &["approve", "r1", ""][..],
            &["approve", "r1", "-m", ""][..],
            &["sync", "--wait", ""][..],
        ] {
            let answer = at(words);
            assert_eq!(answer.lookup, None, "{words:?}");
            assert_eq!(render(&answer, &[]), ":4\n", "{words:?}");
        }
    }

    #[test]
    fn the_lookup_reads_the_cluster_the_typed_flags_name() {
        let answer = at(&[
            "--kubeconfig",
            "/k",
            "--context=bob",
            "-nhome",
            "--as",
            "carol",
            "approve",
            "",
        ]);
        assert_eq!(
            answer.typed,
            Typed {
                kubeconfig: Some("/k".into()),
                context: Some("bob".into()),
                namespace: Some("home".into()),
                as_user: Some("carol".into()),
            }
        );
        let names = [
            (
                "september-1".to_owned(),
                "CategorizationPlan/september".to_owned(),
            ),
            ("october-1".to_owned(), String::new()),
        ];
        let mut answer = answer;
        answer.partial = "sep".into();
        assert_eq!(
            render(&answer, &names),
            "september-1\tCategorizationPlan/september\n:4\n"
        );
    }

    #[test]
    fn files_complete_as_files() {
        assert_eq!(
            offered(&["apply", "-f", "ex"]),
            ["yaml", "yml", "json", ":8"]
        );
        assert_eq!(offered(&["--kubeconfig", ""]), [":0"]);
    }

    #[test]
    fn an_unknown_command_offers_nothing() {
        assert_eq!(offered(&["frobnicate", ""]), [":4"]);
    }

    #[test]
    fn a_description_cannot_break_the_format() {
        let answer = at(&["approve", ""]);
        let names = [("r1".to_owned(), "line\nbreak\ttab".to_owned())];
        assert_eq!(render(&answer, &names), "r1\tline break tab\n:4\n");
    }
}
