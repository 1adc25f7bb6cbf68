use serde_json::json;

use super::*;

#[test]
fn the_master_reads_its_job_from_the_environment_and_its_deadline_from_the_command_line() {
    use clap::Parser as _;
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: MasterArgs,
    }
    let args = |argv: &[&str]| Cli::try_parse_from(argv).map(|c| c.args);
    let job = r#"{"app": "synthetic", "maps": 3, "reduces": 1, "maxContainers": 2}"#;
    let spec = Spec::read(
        args(&["m", "--deadline-ms=1800000000000"]).unwrap(),
        Some(job),
    )
    .unwrap();
    assert_eq!(
        spec.deadline,
        Some(Deadline::from_epoch_ms(1_800_000_000_000))
    );
    assert_eq!(spec.job.max_containers, Some(2));
    // What a job leaves out takes the defaults it always had: 1 s maps writing 64 KiB
    // each from a 1 MiB split, 1 s reduces.
    let want = SyntheticTask {
        seconds: 1.0,
        input_bytes: 1 << 20,
        output_bytes: 1 << 16,
    };
    match app_spec(&spec.job).unwrap() {
        AppSpec::Synthetic {
            maps,
            reduce_seconds,
        } => {
            assert_eq!(maps, vec![want; 3]);
            assert_eq!(reduce_seconds, [1.0]);
        }
        other => panic!("{other:?}"),
    }
    let none = Spec::read(args(&["m"]).unwrap(), Some(job)).unwrap();
    assert_eq!(none.deadline, None);
    // The old flags are gone: the job has one source.
    assert!(args(&["m", "--app=wordcount"]).is_err());
    assert!(args(&["m", "--deadline-ms=soon"]).is_err());
    // Unset, not a job, or not one the rm would accept: an error that says which.
    for (json, why) in [
        (None, "is not set"),
        (Some("{"), "is not a job"),
        (
            Some(r#"{"app": "synthetic", "maps": 3, "colour": 1}"#),
            "is not a job",
        ),
        (Some(r#"{"app": "wordcount"}"#), "not one the rm accepts"),
    ] {
        let e = Spec::read(args(&["m"]).unwrap(), json).err().unwrap();
        assert!(format!("{e:#}").contains(why), "{json:?}: {e:#}");
    }
}

#[test]
fn the_task_slots_are_what_the_running_nodes_hold_less_the_masters_container() {
    let node = |state: &str, memory: u64, vcores: u64| {
        json!({ "id": "n:1", "state": state,
                "totalResource": { "memory": memory, "vCores": vcores } })
    };
    let nodes = |list: Vec<Value>| json!({ "nodes": { "node": list } });
    let task = Resource {
        memory_mb: 256,
        vcores: 1,
    };
    // The demo at scale: one node of two one-core containers, one of them the master's.
    assert_eq!(
        task_slots(&nodes(vec![node("RUNNING", 1024, 2)]), task),
        Some(1)
    );
    // The default demo: three such nodes, five task slots.
    let three = vec![node("RUNNING", 1024, 2); 3];
    assert_eq!(task_slots(&nodes(three), task), Some(5));
    // Memory binds where it is the fewer; a lost node holds nothing.
    let mixed = vec![node("RUNNING", 512, 8), node("LOST", 4096, 4)];
    assert_eq!(task_slots(&nodes(mixed), task), Some(1));
    // Nothing said of resources: no allotment, not zero.
    assert_eq!(
        task_slots(&json!({ "nodes": { "node": [{ "id": "n:1" }] } }), task),
        None
    );
    assert_eq!(task_slots(&json!({}), task), None);
}
