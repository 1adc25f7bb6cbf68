//! `GET /ws/v1/cluster/apps` filtered, sorted and paged on the rm (what the web UI's
//! applications table asks for): YARN's filters and yard's own (`search`, `outcome`, `sort`,
//! `offset`), `apps.total`, each bad value a 400 naming its parameter, and each caller listing
//! only what it may read (a user its own applications, an admin every one). The MapReduce
//! jobs' list takes `ids`, for the jobs of one page.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{Harness, T0, token};
use yard_rm::cluster::Settings;
use yard_wire::auth::Principal;

const APPS: &str = "/ws/v1/cluster/apps";
const FAR: i64 = T0 + 3_600_000;

fn user(name: &str) -> String {
    token(Principal::User { user: name.into() })
}

/// Five applications, submitted a second apart, in this order:
/// 0 `wordcount-small` (alice, MAPREDUCE, answered half its input by its deadline: met),
/// 1 `grep big` (bob, YARN, no deadline),
/// 2 `Sort` (alice, MAPREDUCE, a deadline 10 s after T0, never answered: missed),
/// 3 `zeta` (carol, YARN, deadline ahead: pending),
/// 4 `alpha` (bob, MAPREDUCE, answered from no input: empty);
/// the clock ends a minute after T0.
async fn five_apps() -> (Harness, Vec<String>) {
    let h = Harness::new(Settings::default());
    h.node("n1:8042", 16).await;
    let specs = [
        (
            "wordcount-small",
            "alice",
            "MAPREDUCE",
            Some(FAR),
            Some(0.5),
        ),
        ("grep big", "bob", "YARN", None, None),
        ("Sort", "alice", "MAPREDUCE", Some(T0 + 10_000), None),
        ("zeta", "carol", "YARN", Some(FAR), None),
        ("alpha", "bob", "MAPREDUCE", Some(FAR), Some(0.0)),
    ];
    let mut ids = Vec::new();
    for (i, (name, who, kind, deadline, answer)) in specs.into_iter().enumerate() {
        h.set_now(T0 + 1_000 * i as i64);
        let mut extra = json!({"application-name": name, "user": who, "application-type": kind,
            "queue": "default"});
        if let Some(d) = deadline {
            extra["deadline-ms"] = json!(d);
        }
        let id = match answer {
            Some(fraction) => {
                let id = h.running(extra, json!({})).await;
                let (status, reply) = h
                    .put(
                        &format!("/ws/v1/yard/apps/{id}/result"),
                        json!({"processedFraction": fraction, "answer": {"lines": 1}}),
                    )
                    .await;
                assert_eq!(status, StatusCode::OK, "{reply}");
                id
            }
            None => h.submitted(extra).await,
        };
        ids.push(id);
    }
    h.set_now(T0 + 60_000);
    // What the rm says of each, which the filters below select by.
    let outcomes: Vec<Value> = {
        let mut v = Vec::new();
        for id in &ids {
            v.push(h.app(id).await["deadlineOutcome"].clone());
        }
        v
    };
    assert_eq!(
        outcomes,
        [
            json!("met"),
            Value::Null,
            json!("missed"),
            json!("pending"),
            json!("empty")
        ]
    );
    (h, ids)
}

/// The listed ids (in order) and `apps.total`, as `bearer` asks.
async fn listed_as(h: &Harness, bearer: &str, query: &str) -> (Vec<String>, u64) {
    let uri = if query.is_empty() {
        APPS.to_owned()
    } else {
        format!("{APPS}?{query}")
    };
    let (status, reply) = h
        .call_as(Some(bearer), Method::GET, &uri, None)
        .await
        .pair();
    assert_eq!(status, StatusCode::OK, "{uri}: {reply}");
    let ids = reply["apps"]["app"]
        .as_array()
        .unwrap_or_else(|| panic!("{uri}: {reply}"))
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect();
    (ids, reply["apps"]["total"].as_u64().unwrap())
}

/// As an admin.
async fn listed(h: &Harness, query: &str) -> (Vec<String>, u64) {
    let admin = token(Principal::Admin {
        user: "operator".into(),
    });
    listed_as(h, &admin, query).await
}

/// `ids` picked by index.
fn pick(ids: &[String], which: &[usize]) -> Vec<String> {
    which.iter().map(|&i| ids[i].clone()).collect()
}

#[tokio::test]
async fn search_outcome_and_yarns_filters_select_and_total_counts_what_matched() {
    let (h, ids) = five_apps().await;
    assert_eq!(listed(&h, "").await, (ids.clone(), 5));
    // `search`: a part of the name or of the id, whatever its case.
    assert_eq!(listed(&h, "search=GREP").await, (pick(&ids, &[1]), 1));
    assert_eq!(listed(&h, "search=grep%20b").await, (pick(&ids, &[1]), 1));
    let tail = &ids[3][ids[3].len() - 5..];
    assert_eq!(
        listed(&h, &format!("search={tail}")).await,
        (pick(&ids, &[3]), 1)
    );
    assert_eq!(listed(&h, "search=nothing-like-it").await, (vec![], 0));
    // `outcome`: the rm's deadline outcome, `none` for no deadline, several at once.
    for (outcome, want) in [
        ("met", vec![0]),
        ("none", vec![1]),
        ("missed", vec![2]),
        ("pending", vec![3]),
        ("empty", vec![4]),
        ("met,EMPTY", vec![0, 4]),
        ("missed,none", vec![1, 2]),
    ] {
        let got = listed(&h, &format!("outcome={outcome}")).await;
        assert_eq!(got, (pick(&ids, &want), want.len() as u64), "{outcome}");
    }
    // YARN's filters with them; `total` counts what matched, `limit` cuts the page.
    assert_eq!(listed(&h, "user=alice").await, (pick(&ids, &[0, 2]), 2));
    assert_eq!(
        listed(&h, "applicationTypes=mapreduce&limit=1").await,
        (pick(&ids, &[0]), 3)
    );
    assert_eq!(
        listed(
            &h,
            "applicationTypes=mapreduce&outcome=met,missed&user=alice"
        )
        .await,
        (pick(&ids, &[0, 2]), 2)
    );
    assert_eq!(listed(&h, "queue=default").await.1, 5);
    assert_eq!(listed(&h, "queue=nowhere").await, (vec![], 0));
    assert_eq!(listed(&h, "states=RUNNING").await, (pick(&ids, &[0, 4]), 2));
}

#[tokio::test]
async fn sort_orders_by_a_reports_field_ties_by_id_and_offset_pages_through() {
    let (h, ids) = five_apps().await;
    // Names whatever their case; times the other way with a leading -.
    assert_eq!(
        listed(&h, "sort=name").await.0,
        pick(&ids, &[4, 1, 2, 0, 3])
    );
    assert_eq!(
        listed(&h, "sort=-name").await.0,
        pick(&ids, &[3, 0, 2, 1, 4])
    );
    assert_eq!(
        listed(&h, "sort=-startedTime").await.0,
        pick(&ids, &[4, 3, 2, 1, 0])
    );
    assert_eq!(
        listed(&h, "sort=user").await.0,
        pick(&ids, &[0, 2, 1, 4, 3])
    );
    // No deadline last; equal ones by id either way.
    assert_eq!(
        listed(&h, "sort=deadlineMs").await.0,
        pick(&ids, &[2, 0, 3, 4, 1])
    );
    assert_eq!(
        listed(&h, "sort=-deadlineMs").await.0,
        pick(&ids, &[1, 0, 3, 4, 2])
    );
    assert_eq!(
        listed(&h, "sort=applicationType").await.0,
        pick(&ids, &[0, 2, 4, 1, 3])
    );
    // Pages: `offset` skips, `limit` cuts, `total` stays; past the end, an empty page.
    let page = |offset: u64| format!("sort=-startedTime&limit=2&offset={offset}");
    assert_eq!(listed(&h, &page(0)).await, (pick(&ids, &[4, 3]), 5));
    assert_eq!(listed(&h, &page(2)).await, (pick(&ids, &[2, 1]), 5));
    assert_eq!(listed(&h, &page(4)).await, (pick(&ids, &[0]), 5));
    assert_eq!(listed(&h, &page(9)).await, (vec![], 5));
    // Paging a filtered list.
    assert_eq!(
        listed(&h, "user=bob&sort=id&offset=1").await,
        (pick(&ids, &[4]), 2)
    );
}

#[tokio::test]
async fn each_bad_value_is_a_400_naming_its_parameter_and_what_it_takes() {
    let (h, _) = five_apps().await;
    let admin = token(Principal::Admin {
        user: "operator".into(),
    });
    for (query, says) in [
        ("sort=size", "sort by one of id, name"),
        ("sort=--name", "sort="),
        ("sort=-", "a leading - for descending"),
        ("outcome=late", "met, empty, missed, pending, none"),
        ("outcome=met,soon", "\\\"soon\\\""),
        ("offset=-1", "offset="),
        ("offset=two", "0 or more"),
        ("limit=0", "limit value must be greater"),
        ("page=2", "unknown query parameter"),
    ] {
        let uri = format!("{APPS}?{query}");
        let (status, reply) = h
            .call_as(Some(&admin), Method::GET, &uri, None)
            .await
            .pair();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {reply}");
        let message = reply["RemoteException"]["message"].to_string();
        let name = query.split('=').next().unwrap();
        assert!(message.contains(name), "{uri}: names {name} in {message}");
        assert!(
            reply.to_string().contains(says),
            "{uri}: `{says}` in {reply}"
        );
    }
    // An empty value is no filter, as YARN's are.
    assert_eq!(listed(&h, "search=&outcome=&sort=&offset=").await.1, 5);
}

#[tokio::test]
async fn a_user_lists_its_own_applications_an_admin_all_and_a_master_its_own() {
    let (h, ids) = five_apps().await;
    assert_eq!(
        listed_as(&h, &user("alice"), "").await,
        (pick(&ids, &[0, 2]), 2)
    );
    assert_eq!(
        listed_as(&h, &user("bob"), "sort=-startedTime").await,
        (pick(&ids, &[4, 1]), 2)
    );
    // Filters narrow what the caller may read, never widen it.
    assert_eq!(listed_as(&h, &user("alice"), "user=bob").await, (vec![], 0));
    assert_eq!(
        listed_as(&h, &user("alice"), "outcome=missed,pending").await,
        (pick(&ids, &[2]), 1)
    );
    assert_eq!(listed_as(&h, &user("dave"), "").await, (vec![], 0));
    let master = token(Principal::Master {
        app: ids[0].clone(),
        attempt: 1,
    });
    assert_eq!(listed_as(&h, &master, "").await, (pick(&ids, &[0]), 1));
    assert_eq!(
        listed_as(&h, &token(Principal::Node { node: None }), "").await,
        (vec![], 0)
    );
    assert_eq!(listed(&h, "user=bob").await, (pick(&ids, &[1, 4]), 2));
}

#[tokio::test]
async fn the_jobs_list_takes_the_ids_of_a_page() {
    let h = Harness::new(Settings::default());
    let jobs = "/ws/v1/yard/mapreduce/jobs";
    let job = json!({"app": "synthetic", "maps": 2, "mapSeconds": 0.5, "policy": "dart-paper"});
    let mut ids = Vec::new();
    for name in ["one", "two", "three"] {
        let (status, reply) = h
            .call_as(
                Some(&user("alice")),
                Method::POST,
                jobs,
                Some(json!({"job": job, "name": name})),
            )
            .await
            .pair();
        assert_eq!(status, StatusCode::ACCEPTED, "{reply}");
        ids.push(reply["job"]["id"].as_str().unwrap().to_owned());
    }
    let get = |who: &str, query: String| {
        let bearer = user(who);
        let h = &h;
        async move {
            h.call_as(Some(&bearer), Method::GET, &format!("{jobs}?{query}"), None)
                .await
                .pair()
        }
    };
    let (status, reply) = get("alice", format!("show=all&ids={},{}", ids[2], ids[0])).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let listed: Vec<&str> = reply["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[0].as_str(), ids[2].as_str()]);
    // Another user's ids list nothing of alice's.
    let (_, reply) = get("bob", format!("ids={}", ids[1])).await;
    assert_eq!(reply["jobs"], json!([]));
    // An id that is not one, or too many: 400 naming `ids`.
    let (status, reply) = get("alice", "ids=application_1_0001,nonsense".into()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    assert!(reply.to_string().contains("ids"), "{reply}");
    assert!(reply.to_string().contains("nonsense"), "{reply}");
    let many: Vec<String> = (1..=201).map(|i| format!("application_1_{i:04}")).collect();
    let (status, reply) = get("alice", format!("ids={}", many.join(","))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    assert!(reply.to_string().contains("at most 200"), "{reply}");
}
