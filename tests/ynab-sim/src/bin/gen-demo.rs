//! Writes the demo fixture: `cargo run -p ynab-sim --bin gen-demo [-- PATH]`
//! (default `examples/demo-budget.json` at the workspace root).

fn main() -> std::io::Result<()> {
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/demo-budget.json"
    );
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| default.to_string());
    std::fs::write(&path, ynab_sim::demo::render())?;
    println!("wrote {path}");
    Ok(())
}
