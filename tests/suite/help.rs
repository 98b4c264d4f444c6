//! One CLI grammar: every subcommand's `--help` lists only flags the subcommand accepts, and
//! every flag shows its default (`[default: …]`, which may say there is none).

use crate::common;

use common::{flitforge, text};

/// The subcommands a `--help` page lists under "Commands:".
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  ") || l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// One flag as its help page shows it: name, whether it takes a value, its help text.
struct Flag {
    name: String,
    value: Option<String>,
    text: String,
}

fn flags(help: &str) -> Vec<Flag> {
    let mut out: Vec<Flag> = Vec::new();
    for line in help.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let starts_flag = (2..=6).contains(&indent) && (t.starts_with("--") || t.starts_with('-'));
        if starts_flag && !t.starts_with("- ") {
            let long = t
                .split([' ', ','])
                .find(|w| w.starts_with("--"))
                .unwrap_or(t)
                .to_string();
            let value = t.contains('<').then(|| {
                let v = &t[t.find('<').unwrap() + 1..];
                v[..v.find('>').unwrap_or(v.len())].to_string()
            });
            out.push(Flag {
                name: long,
                value,
                text: t.to_string(),
            });
        } else if let Some(f) = out.last_mut() {
            f.text.push(' ');
            f.text.push_str(t);
        }
    }
    out
}

/// A value clap accepts for the flag: the first possible value, or a number.
fn sample(flag: &Flag) -> String {
    let joined = flag.text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.find("[possible values: ") {
        Some(i) => joined[i + 18..]
            .split([',', ']'])
            .next()
            .unwrap()
            .trim()
            .to_string(),
        None => "1".to_string(),
    }
}

fn check(path: &[String]) -> usize {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let o = flitforge(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let help = text(&o.stdout);
    let mut checked = 0;
    for flag in flags(&help) {
        if matches!(flag.name.as_str(), "--help" | "--version") {
            continue;
        }
        assert!(
            flag.text.contains("[default:"),
            "{path:?} {}: no [default: …] in its help:{}",
            flag.name,
            flag.text
        );
        let mut args: Vec<String> = path.to_vec();
        args.push(flag.name.clone());
        if flag.value.is_some() {
            args.push(sample(&flag));
        }
        args.push("--help".into());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = flitforge(&refs);
        assert!(
            o.status.success(),
            "{refs:?}: the flag its help lists is refused: {}",
            text(&o.stderr)
        );
        checked += 1;
    }
    for sub in subcommands(&help) {
        let mut p = path.to_vec();
        p.push(sub);
        checked += check(&p);
    }
    checked
}

#[test]
fn every_listed_flag_is_accepted_and_shows_its_default() {
    let checked = check(&[]);
    assert!(
        checked > 100,
        "only {checked} flags found: is the help format parsed?"
    );
}

#[test]
fn enum_values_are_printed_as_the_cli_spells_them() {
    let o = flitforge(&["sim", "--inputs", "8", "--mode", "store-forward"]);
    let out = text(&o.stdout);
    assert!(out.contains("mode=store-forward"), "{out}");
}
