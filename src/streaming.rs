//! `yard streaming`: Hadoop Streaming's command line (`-input`, `-mapper`, `-reducer`,
//! `-numReduceTasks`, `-cmdenv`, with Hadoop's single dash) over `yard submit streaming`, so an
//! existing script moves over by changing its command. yard's own flags (`--deadline`,
//! `--policy`, `--rm`, `--json`, …) pass through as `yard submit` takes them.

use anyhow::Result;
use clap::{Args, Parser};

use crate::sim::BadInput;
use crate::submit::{SubmitArgs, submit};

#[derive(Args)]
pub(crate) struct StreamingArgs {
    /// Hadoop Streaming's options: -input NAME -mapper CMD
    /// [-reducer CMD|NONE|aggregate (default cat)] [-numReduceTasks N] [-cmdenv K=V]..., then
    /// any of `yard submit`'s --flags (--deadline 30s, --policy dart, --rm URL, --json, …).
    #[arg(
        value_name = "OPTIONS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    options: Vec<String>,
}

/// `yard submit`'s arguments, parsed from the translated command line.
#[derive(Parser)]
#[command(name = "yard streaming")]
struct AsSubmit {
    #[command(flatten)]
    submit: SubmitArgs,
}

/// Hadoop's options read into `yard submit streaming`'s arguments; yard's `--` flags kept as
/// they are. An unknown or incomplete Hadoop option is bad input naming it.
fn translate(options: &[String]) -> Result<Vec<String>, BadInput> {
    let mut out = vec!["yard streaming".to_owned(), "streaming".to_owned()];
    let mut cmdenv: Vec<&str> = Vec::new();
    let mut given: Vec<&str> = Vec::new();
    let mut it = options.iter();
    while let Some(option) = it.next() {
        if option.starts_with("--") || !option.starts_with('-') {
            out.push(option.clone());
            continue;
        }
        let mut value = || {
            it.next().map(String::as_str).ok_or_else(|| {
                BadInput(format!(
                    "{option} needs a value (see `yard streaming --help`)"
                ))
            })
        };
        let name = option.as_str();
        if name != "-cmdenv" && given.contains(&name) {
            return Err(BadInput(format!("{name} given twice")));
        }
        match name {
            "-input" => out.push(format!("--input={}", value()?)),
            "-output" => out.push(format!("--output={}", value()?)),
            "-mapper" => out.push(format!("--param=mapper={}", value()?)),
            "-reducer" => out.push(format!("--param=reducer={}", value()?)),
            "-numReduceTasks" => out.push(format!("--reduces={}", value()?)),
            "-cmdenv" => {
                let kv = value()?;
                if kv.split_once('=').is_none_or(|(k, _)| k.is_empty()) {
                    return Err(BadInput(format!("-cmdenv {kv:?}: give NAME=VALUE")));
                }
                cmdenv.push(kv);
            }
            other => {
                return Err(BadInput(format!(
                    "unknown option {other}: yard streaming takes Hadoop's -input, -mapper, \
                     -reducer, -numReduceTasks and -cmdenv (others, such as -D, -file and \
                     -combiner, not yet), and yard submit's --flags"
                )));
            }
        }
        given.push(name);
    }
    if !cmdenv.is_empty() {
        out.push(format!("--param=cmdenv={}", cmdenv.join("\n")));
    }
    Ok(out)
}

pub(crate) fn streaming(args: StreamingArgs) -> Result<()> {
    let argv = translate(&args.options)?;
    // clap prints its own usage errors and exits 2, as every other command does.
    let parsed = AsSubmit::try_parse_from(argv).unwrap_or_else(|e| e.exit());
    submit(parsed.submit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn hadoop_options_become_submit_flags() {
        let got = translate(&args(&[
            "-input",
            "books",
            "-mapper",
            "tr -s ' ' '\\n'",
            "-reducer",
            "NONE",
            "-numReduceTasks",
            "3",
            "-cmdenv",
            "A=1",
            "-cmdenv",
            "B=2",
            "--deadline",
            "30s",
        ]))
        .unwrap();
        assert_eq!(
            got,
            args(&[
                "yard streaming",
                "streaming",
                "--input=books",
                "--param=mapper=tr -s ' ' '\\n'",
                "--param=reducer=NONE",
                "--reduces=3",
                "--deadline",
                "30s",
                "--param=cmdenv=A=1\nB=2",
            ])
        );
    }

    #[test]
    fn unknown_or_incomplete_options_are_named() {
        for (bad, named) in [
            (&["-input", "b", "-combiner", "cat"][..], "-combiner"),
            (&["-mapper"][..], "-mapper needs a value"),
            (&["-cmdenv", "novalue"][..], "-cmdenv"),
            (&["-input", "a", "-input", "b"][..], "-input given twice"),
        ] {
            let err = translate(&args(bad)).unwrap_err().to_string();
            assert!(err.contains(named), "{bad:?}: {err}");
        }
    }
}
