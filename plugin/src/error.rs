//! Everything that can stop a command, in words a person acts on, with kubectl-style exit codes.

use crate::logic::api_error;

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// A rule said no (a stale, expired or decided request, an admission policy, a declined
    /// confirmation): exit 2.
    #[error("{0}")]
    Refused(String),
    #[error(
        "cannot use the kubeconfig: {0}. Pass --kubeconfig PATH (or set KUBECONFIG) and --context NAME."
    )]
    Kubeconfig(String),
    #[error("{}", api_error::explain(.action, *.code, .message))]
    Api {
        action: String,
        code: u16,
        message: String,
    },
    #[error("cannot {action}: {source}. Check that the cluster in your kubeconfig is reachable.")]
    Unreachable { action: String, source: kube::Error },
    #[error("{0}")]
    Usage(String),
    /// The command ran but what it waited for did not happen.
    #[error("{0}")]
    Failed(String),
    #[error("cannot write the output: {0}")]
    Output(String),
}

impl PluginError {
    /// 2 refused or stale, 1 any other error.
    pub fn exit_code(&self) -> u8 {
        match self {
            PluginError::Refused(_) => 2,
            PluginError::Api { code, message, .. } if api_error::is_policy(*code, message) => 2,
            _ => 1,
        }
    }

    /// Maps a kube error met while trying to `action`.
    pub fn kube(action: impl Into<String>) -> impl FnOnce(kube::Error) -> PluginError {
        let action = action.into();
        move |e| match e {
            kube::Error::Api(status) => PluginError::Api {
                action,
                code: status.code,
                message: status.message.clone(),
            },
            source => PluginError::Unreachable { action, source },
        }
    }
}
