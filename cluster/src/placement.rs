//! Where a dataset's block replicas go, HDFS's default rule (sans-IO, deterministic): the first
//! replica on a node, the second on another rack, the third on the second's rack but another
//! node, any more wherever is left. Each pick takes the node holding the fewest bytes so far,
//! so a dataset spreads evenly; ties go to the node after the previous block's first replica,
//! so equal nodes take turns. The same input always gives the same placement.

/// A node that can hold blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub node: String,
    pub rack: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    #[error("no running node to hold blocks: start a nodemanager first")]
    NoNodes,
    #[error("the replication factor must be at least 1")]
    NoReplicas,
}

/// For each block (its size in bytes), the indexes into `nodes` of its replicas, first
/// replica first. Replication beyond the node count is capped at the node count.
pub fn place(
    nodes: &[Holder],
    blocks: &[u64],
    replication: usize,
) -> Result<Vec<Vec<usize>>, PlacementError> {
    if nodes.is_empty() {
        return Err(PlacementError::NoNodes);
    }
    if replication == 0 {
        return Err(PlacementError::NoReplicas);
    }
    let replicas = replication.min(nodes.len());
    let mut load = vec![0u64; nodes.len()];
    let mut turn = 0;
    let mut out = Vec::with_capacity(blocks.len());
    for &bytes in blocks {
        let mut chosen: Vec<usize> = Vec::with_capacity(replicas);
        // The least-loaded node passing `fits`, scanning from `turn` so ties rotate.
        let pick = |chosen: &[usize], load: &[u64], fits: &dyn Fn(usize) -> bool| {
            (0..nodes.len())
                .map(|i| (turn + i) % nodes.len())
                .filter(|&n| !chosen.contains(&n) && fits(n))
                .min_by_key(|&n| load[n])
        };
        while chosen.len() < replicas {
            let any = |_: usize| true;
            let next = match chosen.len() {
                0 => pick(&chosen, &load, &any),
                1 => {
                    let first = &nodes[chosen[0]].rack;
                    pick(&chosen, &load, &|n| nodes[n].rack != *first)
                        .or_else(|| pick(&chosen, &load, &any))
                }
                2 => {
                    let second = &nodes[chosen[1]].rack;
                    pick(&chosen, &load, &|n| nodes[n].rack == *second)
                        .or_else(|| pick(&chosen, &load, &any))
                }
                _ => pick(&chosen, &load, &any),
            }
            .expect("fewer replicas than nodes");
            load[next] += bytes;
            chosen.push(next);
        }
        turn = (chosen[0] + 1) % nodes.len();
        out.push(chosen);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn cluster(racks: usize, per_rack: usize) -> Vec<Holder> {
        (0..racks * per_rack)
            .map(|i| Holder {
                node: format!("n{i}:8042"),
                rack: format!("r{}", i / per_rack),
            })
            .collect()
    }

    #[test]
    fn three_replicas_span_two_racks_and_spread_evenly() {
        let nodes = cluster(3, 2);
        let placed = place(&nodes, &[64; 30], 3).unwrap();
        let mut per_node = vec![0; nodes.len()];
        for replicas in &placed {
            let distinct: BTreeSet<_> = replicas.iter().collect();
            assert_eq!(distinct.len(), 3, "{replicas:?}");
            let racks: BTreeSet<_> = replicas.iter().map(|&n| &nodes[n].rack).collect();
            assert_eq!(racks.len(), 2, "HDFS's rule: two racks, {replicas:?}");
            assert_eq!(nodes[replicas[1]].rack, nodes[replicas[2]].rack);
            replicas.iter().for_each(|&n| per_node[n] += 1);
        }
        assert_eq!(per_node.iter().sum::<usize>(), 90);
        assert!(per_node.iter().all(|&c| c == 15), "{per_node:?}");
        assert_eq!(
            place(&nodes, &[64; 30], 3).unwrap(),
            placed,
            "deterministic"
        );
    }

    #[test]
    fn one_rack_still_gets_distinct_nodes_and_replication_is_capped() {
        let nodes = cluster(1, 2);
        for replicas in place(&nodes, &[1, 2, 3], 3).unwrap() {
            assert_eq!(replicas.len(), 2);
            assert_ne!(replicas[0], replicas[1]);
        }
        assert_eq!(place(&cluster(1, 1), &[5], 1).unwrap(), [[0]]);
    }

    #[test]
    fn big_blocks_are_balanced_by_bytes_not_counts() {
        let nodes = cluster(1, 2);
        let placed = place(&nodes, &[100, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10], 1).unwrap();
        let on_first = placed
            .iter()
            .zip([100, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10])
            .filter(|(r, _)| r[0] == placed[0][0])
            .map(|(_, b)| b)
            .sum::<u64>();
        assert_eq!(
            on_first, 100,
            "the other node takes every small block: {placed:?}"
        );
    }

    #[test]
    fn nothing_to_place_on_is_an_error() {
        assert_eq!(place(&[], &[1], 3), Err(PlacementError::NoNodes));
        assert_eq!(
            place(&cluster(1, 1), &[1], 0),
            Err(PlacementError::NoReplicas)
        );
    }
}
