use super::*;
use crate::ids::BlockId;
use proptest::prelude::*;

fn path(start: u32, edges: &[u32], count: u64) -> ProfiledPath {
    ProfiledPath {
        start,
        edges: edges.to_vec(),
        count,
    }
}

/// The edge counts `paths` give, plus `extra` per edge.
fn profile(cfg: &Cfg, paths: Vec<ProfiledPath>, extra: &[u64]) -> FunctionProfile {
    let mut edges = extra.to_vec();
    edges.resize(cfg.edges().len(), 0);
    for p in &paths {
        for &e in &p.edges {
            edges[e as usize] += p.count;
        }
    }
    let mut blocks = vec![0u64; cfg.num_blocks()];
    for p in &paths {
        blocks[p.start as usize] += p.count;
        for &e in &p.edges {
            blocks[cfg.edge(EdgeId(e)).to.index()] += p.count;
        }
    }
    FunctionProfile {
        entry: blocks[0],
        blocks,
        edges: edges.into_iter().map(Some).collect(),
        paths: Vec::new(),
    }
    .with_paths(paths)
}

fn limits(cfg: &Cfg, budget: u64) -> Limits {
    Limits {
        sizes: vec![3; cfg.num_blocks()],
        copyable: vec![true; cfg.num_blocks()],
        budget,
        min_gain: 1,
        max_tails: 8,
        max_traces: 16,
    }
}

/// Two diamonds in a row: 0 -> {1, 2} -> 3 -> {4, 5} -> 6, where the way
/// through 1 decides the second branch (always to 4) and the way through
/// 2 mostly goes to 5. Edges: 0 0->1, 1 0->2, 2 1->3, 3 2->3, 4 3->4, 5
/// 3->5, 6 4->6, 7 5->6.
fn correlated() -> (Cfg, FunctionProfile) {
    let cfg = Cfg::two_diamonds();
    let paths = vec![
        path(0, &[0, 2, 4, 6], 90),
        path(0, &[1, 3, 5, 7], 90),
        path(0, &[1, 3, 4, 6], 10),
    ];
    let p = profile(&cfg, paths, &[]);
    (cfg, p)
}

#[test]
fn correlated_branches_get_a_copy_biased_as_the_paths_through_it() {
    let (cfg, p) = correlated();
    let d = plan(&cfg, &p, &limits(&cfg, 100)).unwrap();
    // Block 3 is copied for the trace through 1 (the hottest path's first
    // side entrance); the copy's branch goes 90:0, the original's 10:90,
    // where the edge profile said 100:90.
    assert_eq!(
        d.tails,
        vec![Tail {
            from: 1,
            slot: 0,
            blocks: vec![3],
            slots: vec![],
        }]
    );
    assert_eq!(d.origin, vec![0, 1, 2, 3, 4, 5, 6, 3]);
    assert_eq!(d.targets[1], vec![7]);
    assert_eq!(d.targets[7], vec![4, 5]);
    assert_eq!(d.counts[7], vec![90, 0]);
    assert_eq!(d.counts[3], vec![10, 90]);
    assert_eq!(d.counts[0], vec![90, 100]);
    assert_eq!(d.added, 3);
    // Block 0's 90 and block 3's 90, then block 0's and 0 + 10.
    assert_eq!((d.mispredicted_before, d.mispredicted_after), (180, 100));
}

#[test]
fn nothing_is_copied_beyond_the_budget_or_below_the_gain() {
    let (cfg, p) = correlated();
    for l in [
        limits(&cfg, 2),
        Limits {
            min_gain: 81,
            ..limits(&cfg, 100)
        },
        Limits {
            copyable: vec![true, true, true, false, true, true, true],
            ..limits(&cfg, 100)
        },
    ] {
        let d = plan(&cfg, &p, &l).unwrap();
        assert!(d.tails.is_empty());
        assert_eq!(d.origin.len(), 7);
        assert_eq!(d.counts[3], vec![100, 90]);
        assert_eq!(d.mispredicted_before, d.mispredicted_after);
    }
}

#[test]
fn branches_the_way_in_does_not_decide_are_left_alone() {
    let (cfg, _) = correlated();
    // Nine in ten: a copy would be biased, not decided.
    let nine_in_ten = profile(
        &cfg,
        vec![
            path(0, &[0, 2, 4, 6], 90),
            path(0, &[1, 3, 5, 7], 90),
            path(0, &[0, 2, 5, 7], 10),
            path(0, &[1, 3, 4, 6], 10),
        ],
        &[],
    );
    let even = profile(
        &cfg,
        vec![
            path(0, &[0, 2, 4, 6], 25),
            path(0, &[1, 3, 5, 7], 25),
            path(0, &[0, 2, 5, 7], 25),
            path(0, &[1, 3, 4, 6], 25),
        ],
        &[],
    );
    for p in [nine_in_ten, even] {
        assert!(plan(&cfg, &p, &limits(&cfg, 100)).unwrap().tails.is_empty());
    }
}

#[test]
fn counts_no_path_explains_stay_with_the_original() {
    // Ten more executions of 1 -> 3 and 3 -> 5 than the paths say (a path
    // lost to a kill): the copy's counts are the paths', the original keeps
    // the rest, and each edge's images add up to its count.
    let (cfg, _) = correlated();
    let paths = correlated().1.paths;
    let p = profile(&cfg, paths, &[0, 0, 10, 0, 0, 10]);
    let d = plan(&cfg, &p, &limits(&cfg, 100)).unwrap();
    assert_eq!(d.counts[7], vec![90, 0]);
    assert_eq!(d.counts[3], vec![10, 100]);
    assert_eq!(d.counts[1], vec![100]);
}

#[test]
fn loop_headers_single_latches_entries_and_path_starts_are_never_copied() {
    // 0 -> 1 -> {2, 3} -> 4 -> {1, 5}: 1 is a loop header and 4 its one
    // latch, whose branch the way in decides (back from 2, mostly on from
    // 3). Edges: 0 0->1, 1 1->2, 2 1->3, 3 2->4, 4 3->4, 5 4->1, 6 4->5.
    // Paths start at 0 and at 1; those ending with the backedge take it.
    let cfg =
        Cfg::from_edge_list(6, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)]).unwrap();
    let paths = vec![
        path(0, &[0, 1, 3, 5], 1),
        path(1, &[1, 3, 5], 40),
        path(1, &[2, 4, 6], 9),
        path(1, &[2, 4, 5], 1),
    ];
    let p = profile(&cfg, paths, &[]);
    assert!(plan(&cfg, &p, &limits(&cfg, 100)).unwrap().tails.is_empty());
    // With a second latch (4 -> 5 -> {1, 6}), 4 may be copied: the copy
    // for the way from 2 always goes back (41:0), the original mostly on.
    // Edges: ... 6 4->5, 7 5->1, 8 5->6.
    let cfg = Cfg::from_edge_list(
        7,
        &[
            (0, 1),
            (1, 2),
            (1, 3),
            (2, 4),
            (3, 4),
            (4, 1),
            (4, 5),
            (5, 1),
            (5, 6),
        ],
    )
    .unwrap();
    let paths = vec![
        path(0, &[0, 1, 3, 5], 1),
        path(1, &[1, 3, 5], 40),
        path(1, &[2, 4, 6, 8], 9),
        path(1, &[2, 4, 5], 1),
    ];
    let p = profile(&cfg, paths, &[]);
    let d = plan(&cfg, &p, &limits(&cfg, 100)).unwrap();
    assert_eq!(
        d.tails,
        vec![Tail {
            from: 2,
            slot: 0,
            blocks: vec![4],
            slots: vec![],
        }]
    );
    assert_eq!(d.origin[7], 4);
    assert_eq!(d.counts[7], vec![41, 0]);
    assert_eq!(d.counts[4], vec![1, 9]);
    assert!(d
        .tails
        .iter()
        .all(|t| !t.blocks.contains(&1) && !t.blocks.contains(&0)));
}

/// A random CFG of `n` blocks (every block reachable from 0, loops and
/// irreducible ones allowed) and random executed paths on it.
fn random_function() -> impl Strategy<Value = (Cfg, Vec<ProfiledPath>, Vec<u64>)> {
    (3usize..10)
        .prop_flat_map(|n| {
            let tree = proptest::collection::vec(0u32..1000, n - 1);
            let extra = proptest::collection::vec((0u32..n as u32, 0u32..n as u32), 0..2 * n);
            let walks = proptest::collection::vec(
                (
                    0u32..n as u32,
                    proptest::collection::vec(0u32..8, 0..8),
                    1u64..50,
                ),
                1..12,
            );
            (
                Just(n),
                tree,
                extra,
                walks,
                proptest::collection::vec(0u64..5, 3 * n),
            )
        })
        .prop_map(|(n, tree, extra, walks, residue)| {
            let mut pairs: Vec<(u32, u32)> = (1..n as u32)
                .map(|b| (tree[b as usize - 1] % b, b))
                .collect();
            pairs.extend(extra);
            let cfg = Cfg::from_edge_list(n, &pairs).unwrap();
            // Each walk: from its start, the successor its choices name,
            // until it would revisit a block (taking that edge last or not)
            // or its choices run out.
            let paths = walks
                .into_iter()
                .map(|(start, choices, count)| {
                    let mut at = BlockId(start);
                    let mut seen = vec![at];
                    let mut edges = Vec::new();
                    for c in choices {
                        let succs = cfg.succs(at);
                        if succs.is_empty() {
                            break;
                        }
                        let e = succs[c as usize % succs.len()];
                        let to = cfg.edge(e).to;
                        if seen.contains(&to) {
                            // Sometimes the path leaves by that edge, as
                            // one ending with a backedge does.
                            if c % 2 == 1 {
                                edges.push(e.0);
                            }
                            break;
                        }
                        seen.push(to);
                        edges.push(e.0);
                        at = to;
                    }
                    path(start, &edges, count)
                })
                .collect();
            let residue = residue[..cfg.edges().len().min(residue.len())].to_vec();
            (cfg, paths, residue)
        })
}

proptest! {
    #[test]
    fn duplication_keeps_every_count_and_never_mispredicts_more(
        (cfg, paths, residue) in random_function(),
        budget in 0u64..40,
    ) {
        let p = profile(&cfg, paths, &residue);
        let d = plan(&cfg, &p, &limits(&cfg, budget)).unwrap();
        prop_assert!(d.added <= budget);
        prop_assert!(d.mispredicted_after <= d.mispredicted_before);
        let n = cfg.num_blocks();
        // Every block's slots go where its original's go (to a copy of it
        // or the original), and an original edge's images add up to its
        // count.
        let mut images = vec![0u64; cfg.edges().len()];
        for (b, targets) in d.targets.iter().enumerate() {
            let o = BlockId(d.origin[b]);
            prop_assert!(o.index() < n);
            let succs = cfg.succs(o);
            prop_assert_eq!(targets.len(), succs.len());
            for &e in succs {
                let edge = cfg.edge(e);
                let to = targets[edge.slot as usize] as usize;
                prop_assert_eq!(d.origin[to], edge.to.0);
                images[e.index()] += d.counts[b][edge.slot as usize];
            }
        }
        let edges: Vec<u64> = p.edges.iter().map(|c| c.unwrap()).collect();
        prop_assert_eq!(images, edges);
        // Every path runs through the result from its start, each edge's
        // slot leading on; a copy's counts are exactly those of the paths
        // that run through it.
        let mut walked: Vec<Vec<u64>> = d.targets.iter().map(|t| vec![0; t.len()]).collect();
        for q in &p.paths {
            let mut at = q.start as usize;
            for &e in &q.edges {
                let edge = cfg.edge(EdgeId(e));
                prop_assert_eq!(d.origin[at], edge.from.0);
                walked[at][edge.slot as usize] += q.count;
                at = d.targets[at][edge.slot as usize] as usize;
            }
        }
        prop_assert_eq!(&walked[n..], &d.counts[n..]);
        // A copy is entered (from where its tail says, and from the copies
        // of that block later tails made), and never is the entry, a loop
        // header or a path's start.
        for b in n..d.origin.len() {
            let into = d.targets.iter().flatten().filter(|&&t| t as usize == b).count();
            prop_assert!(into >= 1);
            prop_assert!(d.origin[b] != 0);
            prop_assert!(p.paths.iter().all(|q| q.start != d.origin[b]));
        }
    }
}
