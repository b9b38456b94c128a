//! The API server's refusals in plain words: what was refused, why, and what to do, instead of
//! a raw Status object.

/// Text the API server puts before an admission policy's own message.
const POLICY_MARK: &str = "denied request: ";

/// What refused a request, read from its HTTP code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A ledgerops admission policy said no; its message already says why and what to do.
    Policy(String),
    /// RBAC: the user lacks the permission.
    Permission,
    /// The user tried `--as` without the right to impersonate.
    Impersonation,
    /// The object does not exist.
    NotFound,
    /// The object changed meanwhile.
    Conflict,
    /// Anything else.
    Other,
}

/// Classifies an error answer.
pub fn classify(code: u16, message: &str) -> Refused {
    match code {
        403 => match message.split_once(POLICY_MARK) {
            Some((_, policy)) => Refused::Policy(policy.trim().to_owned()),
            None if message.contains("cannot impersonate") => Refused::Impersonation,
            None => Refused::Permission,
        },
        404 => Refused::NotFound,
        409 => Refused::Conflict,
        _ => Refused::Other,
    }
}

/// Whether the refusal means "refused" (exit 2) rather than an error (exit 1): an admission
/// policy answered for a rule of ledgerops.
pub fn is_policy(code: u16, message: &str) -> bool {
    matches!(classify(code, message), Refused::Policy(_))
}

/// The sentence a person reads when `action` (such as `approve ApprovalRequest r in namespace
/// household`) was answered with `code` and `message`.
pub fn explain(action: &str, code: u16, message: &str) -> String {
    match classify(code, message) {
        Refused::Policy(why) => {
            format!("cannot {action}: the ledgerops admission policy refused it: {why}")
        }
        Refused::Permission => format!(
            "cannot {action}: you are not allowed to ({message}). Ask a cluster admin to bind you the ledgerops-approver role (approve, reject) or ledgerops-edit (undo, resolve, sync) in that namespace."
        ),
        Refused::Impersonation => format!(
            "cannot {action}: --as needs the right to impersonate that user, and you do not have it ({message}). Decide in your own name: leave out --as."
        ),
        Refused::NotFound => format!(
            "cannot {action}: it does not exist. Check the name and namespace (-n NAMESPACE); kubectl ledgerops queue lists the waiting requests."
        ),
        Refused::Conflict => format!(
            "cannot {action}: it changed while you were looking at it. Run the command again to see it as it is now."
        ),
        Refused::Other => format!("cannot {action}: the API server answered {code}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = "approvalrequests.ledgerops.dev \"september-1\" is forbidden: ValidatingAdmissionPolicy 'ledgerops-approvalrequests' with binding 'ledgerops-approvalrequests' denied request: user alice may not record a decision by \"bob\" on ApprovalRequest september-1: spec.decision.by must be your own user name.";
    const RBAC: &str = "approvalrequests.ledgerops.dev \"r\" is forbidden: User \"carol\" cannot patch resource \"approvalrequests\" in API group \"ledgerops.dev\" in the namespace \"household\"";
    const IMPERSONATE: &str = "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope";

    #[test]
    fn names_what_refused_and_what_to_do() {
        let action = "approve ApprovalRequest r in namespace household";
        let cases = [
            (
                403,
                POLICY,
                "the ledgerops admission policy refused it: user alice may not record a decision by \"bob\"",
            ),
            (
                403,
                RBAC,
                "you are not allowed to (approvalrequests.ledgerops.dev \"r\" is forbidden: User \"carol\" cannot patch",
            ),
            (
                403,
                IMPERSONATE,
                "--as needs the right to impersonate that user",
            ),
            (
                404,
                "approvalrequests.ledgerops.dev \"r\" not found",
                "it does not exist",
            ),
            (
                409,
                "the object has been modified",
                "changed while you were looking",
            ),
            (
                500,
                "etcd is down",
                "the API server answered 500: etcd is down",
            ),
        ];
        for (code, message, want) in cases {
            let text = explain(action, code, message);
            assert!(text.starts_with(&format!("cannot {action}: ")), "{text}");
            assert!(text.contains(want), "{code}: {text}");
            assert!(!text.contains("ValidatingAdmissionPolicy '"), "{text}");
        }
    }

    #[test]
    fn only_a_policy_refusal_counts_as_refused() {
        let cases = [
            (403, POLICY, true),
            (403, RBAC, false),
            (404, "x", false),
            (422, POLICY, false),
        ];
        for (code, message, want) in cases {
            assert_eq!(is_policy(code, message), want, "{code} {message}");
        }
    }
}
