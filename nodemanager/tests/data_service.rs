//! The data service on a real nodemanager (127.0.0.1, ephemeral ports), registered with a
//! stand-in rm that only hands out the keys: blocks over HTTP with an upload grant, and a real
//! container that reads a block and writes map output the node serves to its job token only.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use axum::Json;
use axum::routing::post;
use serde_json::{Value, json};
use support::{Nm, eventually};
use tokio::io::AsyncWriteExt;
use yard_nodemanager::daemon::NmOptions;
use yard_wire::auth::{ClusterSecret, DataGrant};
use yard_wire::protocol::HeartbeatReply;
use yard_wire::token::mint;

#[tokio::test]
async fn blocks_and_map_outputs_on_a_live_nodemanager() {
    let secret = ClusterSecret::new([7; 32]);
    let heartbeat = post(|| async { Json(HeartbeatReply::default()) });
    let rm = support::stand_in_rm(secret.clone(), heartbeat).await;
    let data_key = secret.data_key();
    let work = tempfile::tempdir().unwrap();
    let node = Nm::start(NmOptions {
        heartbeat: Duration::from_millis(20),
        keep_finished: 1,
        // Set, not measured: the probe is tested on its own.
        disk_rate: Some(100e6),
        ..support::options(rm, work.path())
    })
    .await;
    let nm = node.addr;
    let base = format!("http://{nm}/ws/v1/node");
    let http = reqwest::Client::new();
    let info = || async {
        let v: Value = http
            .get(format!("{base}/info"))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        Some(v["nodeInfo"].clone())
    };
    let registered = eventually("registration", || async {
        info().await.filter(|i| i["registered"] == true)
    })
    .await;
    let data_dir = std::fs::canonicalize(work.path().join("nm/data")).unwrap();
    assert_eq!(registered["dataDir"], json!(data_dir));
    assert_eq!(
        (
            registered["numBlocks"].clone(),
            registered["blockBytes"].clone()
        ),
        (json!(0), json!(0))
    );

    // A 3 MiB block over a real socket, back byte for byte, counted in the node's info. Only
    // the dataset's upload grant writes it.
    let block: Vec<u8> = (0..3u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let upload = |dataset: &str| {
        data_key.issue(&DataGrant::Upload {
            dataset: dataset.into(),
            expires_ms: i64::MAX,
        })
    };
    let put_with = |token: Option<String>| {
        let mut r = http
            .put(format!("{base}/blocks/words/blk_0"))
            .body(block.clone());
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        r.send()
    };
    for (token, refused) in [
        (None, 401),
        (Some("yarddata1.00.00".to_owned()), 401),
        (Some(upload("other")), 403),
        (Some(data_key.job_token("application_1000_0001")), 403),
    ] {
        assert_eq!(put_with(token).await.unwrap().status(), refused);
    }
    let put = put_with(Some(upload("words"))).await.unwrap();
    assert_eq!(put.status(), 201);
    assert_eq!(
        http.get(format!("{base}/blocks/words/blk_0"))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    let got = http
        .get(format!("{base}/blocks/words/blk_0"))
        .bearer_auth(data_key.job_token("application_1000_0001"))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    assert!(
        got.bytes().await.unwrap()[..] == block[..],
        "the block came back different"
    );
    let after = info().await.unwrap();
    assert_eq!(
        (after["numBlocks"].clone(), after["blockBytes"].clone()),
        (json!(1), json!(block.len()))
    );

    // An upload whose client goes away mid-body leaves nothing: wait until its temporary
    // file exists, hang up, and it goes.
    let dataset = data_dir.join("blocks/cut");
    let files = || std::fs::read_dir(&dataset).map_or(0, |d| d.count());
    let mut socket = tokio::net::TcpStream::connect(nm).await.unwrap();
    let head = format!(
        "PUT /ws/v1/node/blocks/cut/b HTTP/1.1\r\nHost: nm\r\nAuthorization: Bearer {}\r\nContent-Length: 100000\r\n\r\n",
        upload("cut")
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&[1; 10]).await.unwrap();
    eventually("the upload to start", || async {
        (files() == 1).then_some(())
    })
    .await;
    drop(socket);
    eventually("the partial upload to go", || async {
        (files() == 0).then_some(())
    })
    .await;

    // A container reads the local block and writes map output; a master's attempt to point
    // it elsewhere is overridden by the node.
    let container = "container_e1000_1000_0001_01_000002";
    let script = r#"printf '%s\n%s\n' "$YARD_DATA_DIR" "$YARD_SHUFFLE_DIR" > env.txt &&
        printf '%s' "$YARD_JOB_TOKEN" > job-token.txt &&
        mkdir -p "$YARD_SHUFFLE_DIR/m1" &&
        cp "$YARD_DATA_DIR/words/blk_0" "$YARD_SHUFFLE_DIR/m1/1" &&
        printf abc > "$YARD_SHUFFLE_DIR/m1/0""#;
    let start = |id: &str| {
        json!({
            "token": mint(&secret.container_key(&nm.to_string()), id, &nm.to_string(), 128, 1, i64::MAX),
            "command": ["/bin/sh", "-c", script],
            "env": {"YARD_SHUFFLE_DIR": "/tmp/elsewhere"},
        })
    };
    let started = http
        .post(format!("{base}/containers"))
        .json(&start(container))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 201, "{:?}", started.text().await);
    let partition = format!("{base}/shuffle/application_1000_0001/m1/0");
    let job = data_key.job_token("application_1000_0001");
    let fetch = |url: String| {
        let (http, job) = (http.clone(), job.clone());
        async move {
            let r = http.get(url).bearer_auth(job).send().await.ok()?;
            if r.status() != 200 {
                return None;
            }
            r.bytes().await.ok()
        }
    };
    eventually("the map output", || async {
        fetch(partition.clone()).await.filter(|b| &b[..] == b"abc")
    })
    .await;
    let copied = fetch(format!("{base}/shuffle/application_1000_0001/m1/1"))
        .await
        .unwrap();
    assert!(copied[..] == block[..], "the task read a different block");
    // Another application's job token, or none, reads nothing of this one's output.
    for token in [Some(data_key.job_token("application_1000_0002")), None] {
        let mut r = http.get(&partition);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        assert!([401, 403].contains(&r.send().await.unwrap().status().as_u16()));
    }
    let given =
        std::fs::read_to_string(work.path().join("nm").join(container).join("job-token.txt"))
            .unwrap();
    assert_eq!(given, job, "the container gets its application's job token");
    let env =
        std::fs::read_to_string(work.path().join("nm").join(container).join("env.txt")).unwrap();
    let shuffle = data_dir.join("shuffle/application_1000_0001");
    assert_eq!(
        env.lines().map(PathBuf::from).collect::<Vec<_>>(),
        [data_dir.join("blocks"), shuffle.clone()]
    );

    // A container id without an application is refused before anything runs.
    let refused = http
        .post(format!("{base}/containers"))
        .json(&start("c_1"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let why: Value = refused.json().await.unwrap();
    assert!(why["error"].as_str().unwrap().contains("YARN"), "{why}");
    assert!(!work.path().join("nm/c_1").exists());

    // The master's clean-up: only with the job token; gone, and again is fine.
    let other = http
        .delete(format!("{base}/shuffle/application_1000_0001"))
        .bearer_auth(data_key.job_token("application_1000_0002"))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 403);
    for _ in 0..2 {
        let deleted = http
            .delete(format!("{base}/shuffle/application_1000_0001"))
            .bearer_auth(&job)
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), 204);
    }
    assert_eq!(
        http.get(&partition)
            .bearer_auth(&job)
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert!(!shuffle.exists());

    // Ended containers' directories: only the last `keep_finished` (1 here) stay.
    let mut previous = work.path().join("nm").join(container);
    for n in 3..5 {
        let id = format!("container_e1000_1000_0001_01_00000{n}");
        let body = json!({
            "token": mint(&secret.container_key(&nm.to_string()), &id, &nm.to_string(), 128, 1, i64::MAX),
            "command": ["/bin/true"],
        });
        let started = http
            .post(format!("{base}/containers"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(started.status(), 201);
        let dir = work.path().join("nm").join(&id);
        // It ends at once; the heartbeat that reaps it removes the one kept before.
        eventually("the previous directory to go", || async {
            (dir.exists() && !previous.exists()).then_some(())
        })
        .await;
        previous = dir;
    }

    node.stop().await;
}
