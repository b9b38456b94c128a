//! Which YNAB requests come first. A token's hour holds about 200 requests; work nobody is
//! waiting for (periodic syncs, the policy's own writes, a config repository's converges) must
//! not spend the part of it a person's decision needs, however much of it there is.

/// Why a request goes out, highest first (the derived order: `Approved` is the least).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// The fresh read and bulk updates of a change a person approved (an undo is one).
    Approved,
    /// A sync a person asked for (`kubectl ledgerops sync`, a resolve).
    Asked,
    /// A write the Budget's policy or the autopilot runs without asking anyone.
    Unasked,
    /// Periodic and watch-triggered syncs, and the converges a config repository drives.
    Background,
}

impl Priority {
    /// Every priority, highest first.
    pub const ALL: [Priority; 4] = [
        Priority::Approved,
        Priority::Asked,
        Priority::Unasked,
        Priority::Background,
    ];

    /// Whether it may spend the share of the hour kept for people; the others are paced.
    pub fn reserved(self) -> bool {
        matches!(self, Priority::Approved | Priority::Asked)
    }

    /// Whether a batch of writes at this priority waits the Budget's batch window for more:
    /// a person who approved a write is waiting on it, so it goes out with what is queued
    /// already; nobody waits on the others, and one read and one bulk update serve more of them.
    pub fn gathers(self) -> bool {
        !matches!(self, Priority::Approved)
    }

    /// Its name in metrics and in the Budget's status.
    pub fn label(self) -> &'static str {
        match self {
            Priority::Approved => "approved",
            Priority::Asked => "asked",
            Priority::Unasked => "unasked",
            Priority::Background => "background",
        }
    }
}

/// A Budget sync: asked for when the only thing that changed since the last sync is the
/// Budget's annotations (`ledgerops.dev/sync-requested-at`), periodic or watch-triggered
/// otherwise.
pub fn of_sync(asked: bool) -> Priority {
    if asked {
        Priority::Asked
    } else {
        Priority::Background
    }
}

/// Who let a write go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteDecision {
    /// A person approved it (their decision is recorded on the ApprovalRequest).
    Person,
    /// The Budget's policy ran it unasked.
    Policy,
}

/// Where the change a write carries came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteSource {
    /// A plan or a Transaction someone applied, or the autopilot's plan.
    Applied,
    /// A Transaction a ConfigRepo applied from its repository.
    ConfigRepo,
}

/// A write, by who decided it and where it came from. A person's approval always comes first,
/// whatever it approves: the source only orders what nobody is waiting for.
pub fn of_write(decision: WriteDecision, source: WriteSource) -> Priority {
    match (decision, source) {
        (WriteDecision::Person, _) => Priority::Approved,
        (WriteDecision::Policy, WriteSource::Applied) => Priority::Unasked,
        (WriteDecision::Policy, WriteSource::ConfigRepo) => Priority::Background,
    }
}

/// A batch's read and bulk updates serve every write in it: they go out at the highest
/// priority among them, so background items queued beside a person's write ride along rather
/// than hold it back. An empty batch is background.
pub fn of_batch(writes: impl IntoIterator<Item = Priority>) -> Priority {
    writes.into_iter().min().unwrap_or(Priority::Background)
}

#[cfg(test)]
#[path = "request_priority_tests.rs"]
mod tests;
