//! `yard queues`: the rm's capacity queues (`GET /ws/v1/cluster/scheduler`), one line each:
//! its guaranteed and maximum capacity, what it uses, its applications running and pending,
//! and the policy that orders them.

use anyhow::Result;
use clap::Args;
use yard_wire::hadoop::QueueInfo;

use crate::client::{Client, Rm, print_view, table};

#[derive(Args)]
#[command(
    after_help = "CAPACITY is the queue's guaranteed share of the cluster and MAX the most it may \
hold when others leave room, both in percent of the cluster; USED is what it holds, in percent \
of the cluster and (in brackets) of its own capacity, as YARN's usedCapacity. PREEMPTED counts \
containers taken back from it to give other queues their guarantees. --json prints the \
scheduler's whole reply (scheduler.schedulerInfo, as YARN's)."
)]
pub(crate) struct QueuesArgs {
    #[command(flatten)]
    rm: Rm,
    #[arg(long)]
    json: bool,
}

pub(crate) fn queues(args: QueuesArgs) -> Result<()> {
    let info = Client::new(&args.rm)?.typed(|rm| rm.scheduler())?;
    if args.json {
        return print_view(&info);
    }
    let rows: Vec<Vec<String>> = info.queues.queue.iter().map(row).collect();
    crate::print(&table(
        &[
            "QUEUE",
            "CAPACITY",
            "MAX",
            "USED",
            "RUNNING",
            "PENDING",
            "CONTAINERS",
            "PREEMPTED",
            "POLICY",
        ],
        &rows,
    ))?;
    Ok(())
}

/// A percentage as the table shows it: whole when it is, else to one decimal.
fn pct(p: f64) -> String {
    if (p - p.round()).abs() < 0.05 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

fn row(q: &QueueInfo) -> Vec<String> {
    let c = &q.capacity;
    vec![
        q.queue_name.clone(),
        pct(c.capacity),
        pct(c.max_capacity),
        format!(
            "{} ({})",
            pct(c.absolute_used_capacity),
            pct(c.used_capacity)
        ),
        q.num_active_applications.to_string(),
        q.num_pending_applications.to_string(),
        q.num_containers.to_string(),
        q.preempted_containers.to_string(),
        q.policy.clone(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use yard_wire::hadoop::{Capacities, QueueCapacities, QueueState};
    use yard_wire::views::ResourceView;

    #[test]
    fn a_row_reads_the_queues_capacities_and_apps() {
        let capacity = Capacities {
            capacity: 50.0,
            used_capacity: 150.0,
            max_capacity: 100.0,
            absolute_capacity: 50.0,
            absolute_used_capacity: 75.0,
            absolute_max_capacity: 100.0,
        };
        let q = QueueInfo {
            kind: "capacitySchedulerLeafQueueInfo".into(),
            queue_name: "team-a".into(),
            queue_path: "root.team-a".into(),
            state: QueueState::Running,
            num_applications: 3,
            num_active_applications: 2,
            num_pending_applications: 1,
            num_containers: 6,
            user_limit_factor: 2.0,
            policy: "minedf-wc".into(),
            preempted_containers: 4,
            resources_used: ResourceView {
                memory: 6144,
                v_cores: 6,
            },
            capacities: QueueCapacities {
                queue_capacities_by_partition: Vec::new(),
            },
            capacity,
        };
        assert_eq!(
            row(&q),
            [
                "team-a",
                "50%",
                "100%",
                "75% (150%)",
                "2",
                "1",
                "6",
                "4",
                "minedf-wc"
            ]
        );
        assert_eq!(pct(33.333), "33.3%");
    }
}
