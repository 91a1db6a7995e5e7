//! Help for every subcommand, each with an example.

use crate::common;

use common::Cli;

const SUBCOMMANDS: [&[&str]; 18] = [
    &["agent", "create"],
    &["agent", "list"],
    &["agent", "delete"],
    &["lot"],
    &["remember"],
    &["recall"],
    &["get"],
    &["list"],
    &["graph"],
    &["search"],
    &["embed"],
    &["find"],
    &["verify"],
    &["compact"],
    &["report"],
    &["mcp"],
    &["demo"],
    &["help"],
];

#[test]
fn every_subcommand_has_help_with_an_example() {
    let cli = Cli::new();
    for subcommand in SUBCOMMANDS.iter().filter(|subcommand| subcommand[0] != "help") {
        let mut arguments = vec!["help"];
        arguments.extend_from_slice(subcommand);
        let help = cli.run(&arguments).ok().to_owned();
        assert!(help.contains("Usage: cheesedb"), "{subcommand:?}: {help}");
        assert!(help.contains("Example"), "{subcommand:?} has an example: {help}");
    }
}

#[test]
fn the_top_level_help_lists_every_subcommand() {
    let cli = Cli::new();
    let help = cli.run(&["--help"]).ok().to_owned();
    for subcommand in SUBCOMMANDS {
        assert!(help.contains(&format!("  {}", subcommand[0])), "{} listed: {help}", subcommand[0]);
    }
    assert!(cli.run(&["help"]).ok().contains("Commands:"));
    assert!(cli.run(&["--version"]).ok().starts_with("cheesedb "));
}

#[test]
fn the_benchmark_is_no_subcommand() {
    let cli = Cli::new();
    assert!(!cli.run(&["--help"]).ok().contains("  bench"));
    // The benchmark is cheesedb-bench, a program of its own.
    let refused = cli.run(&["bench", "--smoke"]).fails_with(2).to_owned();
    assert!(refused.contains("unrecognized subcommand 'bench'"), "{refused}");
}
