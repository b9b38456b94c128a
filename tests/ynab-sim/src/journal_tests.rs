use super::*;

fn request(n: u64) -> Event {
    Event::Request {
        endpoint: format!("GET /v1/plans/{n}"),
        token: "t".into(),
        status: "200".into(),
        came_ms: n,
        knowledge: Some(1),
    }
}

#[test]
fn pages_start_after_the_sequence_asked_for() {
    let mut journal = Journal::default();
    for n in 0..3 {
        journal.record(n, request(n));
    }
    let seqs: Vec<u64> = journal.after(1).iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [2, 3]);
    assert!(journal.after(3).is_empty());
}

#[test]
fn the_oldest_entries_go_first_when_it_is_full() {
    let mut journal = Journal::default();
    for n in 0..(JOURNAL_MAX as u64 + 2) {
        journal.record(n, request(n));
    }
    let first = journal.after(0);
    assert_eq!(first[0].seq, 3);
    assert_eq!(first.len(), JOURNAL_PAGE);
}

#[test]
fn an_entry_reads_back_as_it_was_written() {
    let mut journal = Journal::default();
    journal.record(7, request(7));
    let json = serde_json::to_string(&journal.after(0)).unwrap();
    assert!(json.contains(r#""kind":"request""#), "{json}");
    let back: Vec<Entry> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, journal.after(0));
}
