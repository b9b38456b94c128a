//! Pure decisions of the plugin: what is waiting and in which order, what may be approved, what
//! an approval ended in, how tables and API errors read. No network, no terminal, no clock: time
//! comes in as an argument.

pub mod api_error;
pub mod approvable;
pub mod check;
pub mod complete;
pub mod describe;
pub mod difference;
pub mod edits;
pub mod health;
pub mod outcome;
pub mod preview;
pub mod propose;
pub mod queue;
pub mod review;
pub mod table;
pub mod time;
