//! `yard streaming`: Hadoop Streaming's command line (`-input` (repeatable), `-mapper`,
//! `-combiner`, `-reducer`, `-numReduceTasks`, `-cmdenv`, `-file`/`-files`, `-partitioner`,
//! `-D`, with Hadoop's single dash) over `yard submit streaming`, so an existing script moves
//! over by changing its command. yard's own flags (`--deadline`, `--policy`, `--rm`,
//! `--json`, …) pass through as `yard submit` takes them.
//!
//! `-D` honours what yard's job has room for, and refuses any other key by name listing
//! these ([`HONOURED`]): `mapreduce.job.reduces` (the reduces);
//! `stream.map.output.field.separator` and `stream.num.map.output.key.fields` (how a mapper
//! line splits into key and value); `mapreduce.map.output.key.field.separator` and
//! `mapreduce.partition.keypartitioner.options` (`-kA[,B]` whole fields, with `-partitioner
//! org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner`); `mapreduce.map.memory.mb` and
//! `mapreduce.reduce.memory.mb` (a job's containers run maps and reduces alike, so the larger
//! is its container size); `mapreduce.map.maxattempts` and `mapreduce.reduce.maxattempts`;
//! and yard's own `yard.aggregate.estimator` (`stratified`, the default, or `ratio`:
//! `-reducer aggregate`'s intervals, `yard_appmaster::apps::aggregate`).
//!
//! Before anything is submitted (exit 2): a `-file` that cannot be read or is over the cap
//! (`yard submit`'s `--file`), a command whose first word is a shipped script that is not
//! executable, or `./x` that is not shipped.

use anyhow::Result;
use clap::{Args, Parser};

use crate::sim::BadInput;
use crate::submit::{SubmitArgs, submit};

#[derive(Args)]
pub(crate) struct StreamingArgs {
    /// Hadoop Streaming's options: -input NAME (repeat for several datasets) [-output NAME]
    /// -mapper CMD [-combiner CMD] [-reducer CMD|NONE|aggregate (default cat)] [-numReduceTasks N] [-cmdenv K=V]...
    /// [-file PATH]... [-files A,B] [-partitioner
    /// org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner] [-D KEY=VALUE]..., then any of
    /// `yard submit`'s --flags (--deadline 30s, --policy dart, --rm URL, --json, …). -D takes
    /// the settings yard honours: mapreduce.job.reduces; stream.map.output.field.separator,
    /// stream.num.map.output.key.fields (the key: its separator and field count);
    /// mapreduce.map.output.key.field.separator and mapreduce.partition.keypartitioner.options
    /// (-kA[,B], with -partitioner KeyFieldBasedPartitioner); mapreduce.map.memory.mb,
    /// mapreduce.reduce.memory.mb (one container size serves both: the larger is taken);
    /// mapreduce.map.maxattempts, mapreduce.reduce.maxattempts. Any other key is refused. A
    /// shipped file is at most 64 KiB with the others, and a command that runs a shipped script
    /// needs it executable (or its interpreter: python3 m.py).
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

/// The `-D` keys yard honours and the `yard submit` flag each becomes (`None`: a streaming
/// parameter of the same name).
const HONOURED: [(&str, Option<&str>); 10] = [
    ("mapreduce.job.reduces", Some("--reduces")),
    ("stream.map.output.field.separator", None),
    ("stream.num.map.output.key.fields", None),
    ("mapreduce.map.output.key.field.separator", None),
    ("mapreduce.partition.keypartitioner.options", None),
    ("mapreduce.map.memory.mb", Some("--memory-mb")),
    ("mapreduce.reduce.memory.mb", Some("--memory-mb")),
    ("mapreduce.map.maxattempts", Some("--map-max-attempts")),
    (
        "mapreduce.reduce.maxattempts",
        Some("--reduce-max-attempts"),
    ),
    // yard's own: -reducer aggregate's estimator, stratified or ratio (ApproxHadoop's).
    (yard_appmaster::apps::aggregate::ESTIMATOR_PARAM, None),
];

/// What the translation found that is checked against the files before submission.
#[derive(Debug, Default, PartialEq)]
struct Translated {
    argv: Vec<String>,
    /// (option, command): -mapper, -combiner, -reducer as given.
    commands: Vec<(&'static str, String)>,
    /// -file and -files paths, in order.
    files: Vec<String>,
}

/// Hadoop's options read into `yard submit streaming`'s arguments; yard's `--` flags kept as
/// they are. An unknown or incomplete Hadoop option is bad input naming it.
fn translate(options: &[String]) -> Result<Translated, BadInput> {
    let mut t = Translated {
        argv: vec!["yard streaming".to_owned(), "streaming".to_owned()],
        ..Translated::default()
    };
    let out = &mut t.argv;
    let mut cmdenv: Vec<&str> = Vec::new();
    let mut given: Vec<&str> = Vec::new();
    let mut inputs = 0;
    let mut memory: Option<u64> = None;
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
        let (name, attached) = match option.strip_prefix("-D") {
            Some(kv) if !kv.is_empty() => ("-D", Some(kv)),
            _ => (option.as_str(), None),
        };
        let repeatable = ["-cmdenv", "-input", "-file", "-files", "-D"];
        if !repeatable.contains(&name) && given.contains(&name) {
            return Err(BadInput(format!("{name} given twice")));
        }
        match name {
            "-input" => {
                let input = value()?;
                out.push(match inputs {
                    0 => format!("--input={input}"),
                    _ => format!("--more-input={input}"),
                });
                inputs += 1;
            }
            "-mapper" | "-combiner" | "-reducer" => {
                let command = value()?;
                let option = ["-mapper", "-combiner", "-reducer"]
                    .into_iter()
                    .find(|o| *o == name)
                    .expect("one of them");
                t.commands.push((option, command.to_owned()));
                out.push(format!("--param={}={command}", &name[1..]));
            }
            "-output" => out.push(format!("--output={}", value()?)),
            "-partitioner" => out.push(format!("--param=partitioner={}", value()?)),
            "-numReduceTasks" => out.push(format!("--reduces={}", value()?)),
            "-file" => t.files.push(value()?.to_owned()),
            "-files" => t.files.extend(
                value()?
                    .split(',')
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned),
            ),
            "-cmdenv" => {
                let kv = value()?;
                if kv.split_once('=').is_none_or(|(k, _)| k.is_empty()) {
                    return Err(BadInput(format!("-cmdenv {kv:?}: give NAME=VALUE")));
                }
                cmdenv.push(kv);
            }
            "-D" => {
                let kv = match attached {
                    Some(kv) => kv,
                    None => value()?,
                };
                let Some((key, v)) = kv.split_once('=') else {
                    return Err(BadInput(format!("-D {kv:?}: give KEY=VALUE")));
                };
                let honoured = HONOURED.iter().find(|(k, _)| *k == key).ok_or_else(|| {
                    let names: Vec<&str> = HONOURED.iter().map(|(k, _)| *k).collect();
                    BadInput(format!(
                        "-D {key}: not a setting yard honours; it honours {}",
                        names.join(", ")
                    ))
                })?;
                match honoured.1 {
                    None => out.push(format!("--param={key}={v}")),
                    Some("--memory-mb") => {
                        let mb: u64 = v.parse().map_err(|_| {
                            BadInput(format!("-D {key}={v}: give a whole number of MB"))
                        })?;
                        // One container size runs maps and reduces alike: the larger.
                        memory = Some(memory.map_or(mb, |m| m.max(mb)));
                    }
                    Some(flag) => out.push(format!("{flag}={v}")),
                }
            }
            other => {
                return Err(BadInput(format!(
                    "unknown option {other}: yard streaming takes Hadoop's -input, -output, \
                     -mapper, -combiner, -reducer, -numReduceTasks, -cmdenv, -file, -files, \
                     -partitioner and -D, and yard submit's --flags"
                )));
            }
        }
        given.push(name);
    }
    if !cmdenv.is_empty() {
        out.push(format!("--param=cmdenv={}", cmdenv.join("\n")));
    }
    if let Some(mb) = memory {
        out.push(format!("--memory-mb={mb}"));
    }
    for f in &t.files {
        out.push(format!("--file={f}"));
    }
    Ok(t)
}

/// The word `sh` runs first in `command`, if it is a plain word (no quoting, variables or
/// redirections), with a leading `./` dropped.
fn program(command: &str) -> Option<&str> {
    let first = command.split_whitespace().next()?;
    if first.contains(['\'', '"', '$', '`', '\\', '>', '<', '|', ';', '&', '(', '=']) {
        return None;
    }
    Some(first.strip_prefix("./").unwrap_or(first))
}

/// Before submission, what the CLI can see of a command's script: one that names a shipped
/// file needs it executable; one that names `./x` needs `x` shipped.
fn check_commands(t: &Translated) -> Result<(), BadInput> {
    for (option, command) in &t.commands {
        let Some(word) = program(command) else {
            continue;
        };
        let shipped = t.files.iter().find(|f| {
            std::path::Path::new(f)
                .file_name()
                .is_some_and(|n| n == word)
        });
        match shipped {
            Some(path) => {
                use std::os::unix::fs::PermissionsExt as _;
                let meta = std::fs::metadata(path)
                    .map_err(|e| BadInput(format!("-file {path}: cannot read it: {e}")))?;
                if meta.permissions().mode() & 0o111 == 0 {
                    return Err(BadInput(format!(
                        "{option} {command:?} runs the shipped file {path}, which is not \
                         executable: chmod +x {path}, or run it through its interpreter \
                         (e.g. python3 {word})"
                    )));
                }
            }
            None if command.trim_start().starts_with("./") => {
                return Err(BadInput(format!(
                    "{option} {command:?} runs ./{word}, which is not shipped: add -file {word}"
                )));
            }
            None => {}
        }
    }
    Ok(())
}

pub(crate) fn streaming(args: StreamingArgs) -> Result<()> {
    let t = translate(&args.options)?;
    check_commands(&t)?;
    // clap prints its own usage errors and exits 2, as every other command does.
    let parsed = AsSubmit::try_parse_from(t.argv).unwrap_or_else(|e| e.exit());
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
            "-input",
            "more",
            "-mapper",
            "tr -s ' ' '\\n'",
            "-combiner",
            "uniq",
            "-reducer",
            "NONE",
            "-numReduceTasks",
            "3",
            "-cmdenv",
            "A=1",
            "-cmdenv",
            "B=2",
            "-file",
            "m.py",
            "-files",
            "a.txt,b.txt",
            "-D",
            "stream.num.map.output.key.fields=2",
            "-Dmapreduce.map.memory.mb=512",
            "-D",
            "mapreduce.reduce.memory.mb=1024",
            "-D",
            "mapreduce.map.maxattempts=1",
            "-partitioner",
            "org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner",
            "--deadline",
            "30s",
        ]))
        .unwrap();
        assert_eq!(
            got.argv,
            args(&[
                "yard streaming",
                "streaming",
                "--input=books",
                "--more-input=more",
                "--param=mapper=tr -s ' ' '\\n'",
                "--param=combiner=uniq",
                "--param=reducer=NONE",
                "--reduces=3",
                "--param=stream.num.map.output.key.fields=2",
                "--map-max-attempts=1",
                "--param=partitioner=org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner",
                "--deadline",
                "30s",
                "--param=cmdenv=A=1\nB=2",
                "--memory-mb=1024",
                "--file=m.py",
                "--file=a.txt",
                "--file=b.txt",
            ])
        );
        assert_eq!(got.files, ["m.py", "a.txt", "b.txt"]);
        assert_eq!(got.commands.len(), 3);
    }

    #[test]
    fn unknown_or_incomplete_options_are_named() {
        for (bad, named) in [
            (
                &["-input", "b", "-inputformat", "o"][..],
                "unknown option -inputformat",
            ),
            (&["-output", "o", "-output", "p"][..], "-output given twice"),
            (&["-mapper"][..], "-mapper needs a value"),
            (&["-cmdenv", "novalue"][..], "-cmdenv"),
            (&["-mapper", "a", "-mapper", "b"][..], "-mapper given twice"),
            (
                &["-D", "mapreduce.job.queuename=x"][..],
                "-D mapreduce.job.queuename: not a setting yard honours; it honours mapreduce.job.reduces, ",
            ),
            (&["-D", "novalue"][..], "give KEY=VALUE"),
            (
                &["-D", "mapreduce.map.memory.mb=lots"][..],
                "whole number of MB",
            ),
        ] {
            let err = translate(&args(bad)).unwrap_err().to_string();
            assert!(err.contains(named), "{bad:?}: {err}");
        }
    }

    #[test]
    fn a_shipped_script_must_be_executable_and_a_local_one_shipped() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("m.sh");
        std::fs::write(&script, "#!/bin/sh\ncat\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
        let path = script.display().to_string();
        let t = |mapper: &str| translate(&args(&["-mapper", mapper, "-file", &path])).unwrap();
        let err = check_commands(&t("m.sh")).unwrap_err().to_string();
        assert!(err.contains("not executable: chmod +x"), "{err}");
        // Through its interpreter it needs no execute bit.
        check_commands(&t("sh m.sh")).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        check_commands(&t("./m.sh -x")).unwrap();
        let err = check_commands(&t("./other.py")).unwrap_err().to_string();
        assert!(err.contains("add -file other.py"), "{err}");
        assert_eq!(program("awk '{print}'"), Some("awk"));
        assert_eq!(program("A=1 cmd"), None);
    }
}
