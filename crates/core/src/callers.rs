//! Entry counts given by callers. A function whose every call is a direct
//! call from profiled code of its own module (an internal function whose
//! address is never taken, outside recursion: found by `pathprof-llvm`'s
//! `callgraph::entry_call_sites`) needs no count of its own entries: they are the executions of
//! its call sites, each the count of the block holding it. Its plan leaves
//! the entry off the spanning tree (one chord fewer) or, with one path and
//! no other counter, counts nothing at all
//! ([`crate::layout::Layout::takes_entry_from_callers`]).
//!
//! A block's count is how often it was entered; a call in it runs as often
//! unless an activation ended inside a call before it in the block (`exit`,
//! `longjmp`, a thread blocked there at a dump): so only a block's calls up
//! to its first that might not return are sites. The entry count is then as
//! exact as the callers' counts: where theirs do not balance or lost
//! executions (path mode without early-exit counting), the function's
//! own account says by how much its entry count may be off (an imbalance at
//! [`FlowNode::Callers`]), never hiding it.
//!
//! This module owns the entry count the sites give and which functions lie
//! on call cycles; the call-site record itself ([`CallSite`], a map
//! function's `entry_calls`), its check and the order that derives callers
//! first are the map's ([`crate::map::call_sites`], re-exported here), and
//! writing the entry counts out as counts of the functions' own is
//! [`crate::materialize`]'s.

use crate::derive::{FlowNode, FunctionCounts, Unbalanced};
pub use crate::map::call_sites::check;
pub use crate::map::{callers_first, CallSite};

/// Which of `n` functions lie on a cycle of calls, `callers[i]` being the
/// functions that call function `i` (a self call is a cycle): those whose
/// entry count, given by callers, would wait on itself, so they count their
/// own (`pathprof-llvm`'s `callgraph::entry_call_sites` asks). Tarjan's
/// strongly connected components, without recursion: linear in functions
/// and calls, however large a whole-program module is.
pub fn on_call_cycles(callers: &[Vec<usize>]) -> Vec<bool> {
    const UNVISITED: usize = usize::MAX;
    let n = callers.len();
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut cyclic = vec![false; n];
    let mut next_index = 0;
    // The depth-first search's path: (function, how many of its callers
    // it has visited).
    let mut path: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        path.push((root, 0));
        while let Some(top) = path.len().checked_sub(1) {
            let (v, visited) = path[top];
            if visited == 0 {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = callers[v].get(visited) {
                path[top].1 += 1;
                if w == v {
                    cyclic[v] = true;
                } else if index[w] == UNVISITED {
                    path.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let at = stack
                    .iter()
                    .rposition(|&w| w == v)
                    .expect("v is on the stack");
                let component = stack.split_off(at);
                for &w in &component {
                    on_stack[w] = false;
                    cyclic[w] |= component.len() > 1;
                }
            }
        }
    }
    cyclic
}

/// The entry count `sites` give from their callers' counts (`None`: not
/// derived, counts 0), saturating, and where the callers' counts do not
/// balance or lost executions, the account of how far it may be off: the
/// node [`FlowNode::Callers`], its inflow the count and its outflow more by
/// the callers' imbalance and losses (how far the count may be off, either
/// way: [`crate::flow::Imbalance::total`]).
pub fn entry_count(
    sites: &[CallSite],
    counts: &[Option<FunctionCounts>],
) -> (u64, Option<Unbalanced>) {
    let mut entry = 0u64;
    let mut doubt = 0u64;
    for site in sites {
        let Some(caller) = counts.get(site.function as usize).and_then(Option::as_ref) else {
            continue;
        };
        let count = caller.blocks.get(site.block.index()).copied().unwrap_or(0);
        entry = entry.saturating_add(count);
        if !caller.imbalance.is_balanced() {
            doubt = doubt.saturating_add(caller.imbalance.total().max(1));
        }
        // Executions of the caller cut short uncounted (path mode) may have
        // made this call.
        doubt = doubt.saturating_add(caller.lost);
    }
    let node = (doubt > 0).then_some(Unbalanced {
        node: FlowNode::Callers,
        inflow: entry,
        outflow: entry.saturating_add(doubt),
    });
    (entry, node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::Cfg;
    use crate::derive::Imbalance;
    use crate::ids::BlockId;
    use crate::layout::{FlowEdge, Layout};
    use crate::map::BlockInfo;
    use crate::map::{MapFile, MapFunction};
    use crate::materialize::materialize;
    use crate::plan::Mode;
    use crate::planner::{plan_function, PlanOptions};
    use pathprof_format::{RawFunction, RawProfile};

    /// Whether `i` reaches itself through `callers`, by a search of its own.
    fn reaches_itself(callers: &[Vec<usize>], i: usize) -> bool {
        let mut seen = vec![false; callers.len()];
        let mut stack = callers[i].clone();
        while let Some(c) = stack.pop() {
            if c == i {
                return true;
            }
            if !std::mem::replace(&mut seen[c], true) {
                stack.extend(&callers[c]);
            }
        }
        false
    }

    #[test]
    fn only_functions_on_cycles_of_calls_wait_on_themselves() {
        // 0 → 1 → 2 → 1 (a cycle), 2 → 3 (after it), 4 calls itself, 5 and
        // 6 call each other and 0, 7 calls nobody.
        let callers = vec![
            vec![5],
            vec![0, 2],
            vec![1],
            vec![2],
            vec![4],
            vec![6],
            vec![5],
            vec![],
        ];
        let want = [false, true, true, false, true, true, true, false];
        assert_eq!(on_call_cycles(&callers), want);
        for (i, &cyclic) in want.iter().enumerate() {
            assert_eq!(reaches_itself(&callers, i), cyclic);
        }
    }

    proptest::proptest! {
        #[test]
        fn call_cycles_are_the_functions_that_reach_themselves(
            edges in proptest::collection::vec((0usize..12, 0usize..12), 0..30)
        ) {
            let mut callers = vec![Vec::new(); 12];
            for (caller, callee) in edges {
                callers[callee].push(caller);
            }
            let cyclic = on_call_cycles(&callers);
            for (i, &c) in cyclic.iter().enumerate() {
                proptest::prop_assert_eq!(c, reaches_itself(&callers, i), "function {}", i);
            }
        }
    }

    fn given() -> PlanOptions {
        PlanOptions {
            entry_from_callers: true,
            ..PlanOptions::default()
        }
    }

    fn diamond() -> Cfg {
        Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap()
    }

    #[test]
    fn a_function_of_one_block_counts_nothing_when_its_callers_give_its_entries() {
        let one = Cfg::from_edge_list(1, &[]).unwrap();
        for mode in [Mode::Block, Mode::Edge, Mode::Path] {
            let (plan, layout) = plan_function(&one, mode, &given()).unwrap();
            assert!(layout.takes_entry_from_callers());
            assert_eq!((plan.num_slots, plan.probes.len()), (0, 0), "{mode:?}");
            let (counted, _) = plan_function(&one, mode, &PlanOptions::default()).unwrap();
            assert_eq!(counted.probes.len(), 1, "{mode:?}");
        }
    }

    #[test]
    fn a_known_entry_saves_one_chord_and_path_plans_of_many_paths_keep_theirs() {
        for mode in [Mode::Block, Mode::Edge] {
            let (counted, _) = plan_function(&diamond(), mode, &PlanOptions::default()).unwrap();
            let (given, _) = plan_function(&diamond(), mode, &given()).unwrap();
            assert_eq!(given.num_slots + 1, counted.num_slots, "{mode:?}");
        }
        let (plan, layout) = plan_function(&diamond(), Mode::Path, &given()).unwrap();
        assert!(!layout.takes_entry_from_callers());
        assert!(!plan.probes.is_empty());
    }

    fn counts(blocks: Vec<u64>, imbalance: Imbalance) -> FunctionCounts {
        FunctionCounts {
            imbalance,
            ..FunctionCounts::of_blocks(blocks[0], blocks)
        }
    }

    fn site(function: u32, block: usize) -> CallSite {
        CallSite {
            function,
            block: BlockId::new(block),
        }
    }

    #[test]
    fn sites_add_their_blocks_counts_and_doubt_callers_that_do_not_balance() {
        let unbalanced = Imbalance {
            nodes: vec![Unbalanced {
                node: FlowNode::Block(BlockId::new(1)),
                inflow: 2,
                outflow: 4,
            }],
            guessed: Vec::new(),
        };
        let callers = vec![
            Some(counts(vec![5, 3, 5], Imbalance::default())),
            Some(counts(vec![7, 1], unbalanced)),
            None,
        ];
        let sites = [site(0, 1), site(0, 1), site(0, 2), site(2, 0)];
        assert_eq!(entry_count(&sites, &callers), (11, None));
        let (entry, doubt) = entry_count(&[site(0, 1), site(1, 1)], &callers);
        assert_eq!(entry, 4);
        let doubt = doubt.unwrap();
        assert_eq!(
            (doubt.node, doubt.inflow, doubt.outflow),
            (FlowNode::Callers, 4, 6)
        );
    }

    /// A diamond planned in edge mode, its entries given by `entry_calls`
    /// when there are any.
    fn function(name: &str, entry_calls: Vec<CallSite>) -> MapFunction {
        let cfg = diamond();
        let options = if entry_calls.is_empty() {
            PlanOptions::default()
        } else {
            given()
        };
        let (_, layout) = plan_function(&cfg, Mode::Edge, &options).unwrap();
        MapFunction {
            name: name.into(),
            display_name: None,
            file: None,
            line: None,
            hash: cfg.shape_hash(),
            blocks: vec![BlockInfo::default(); cfg.num_blocks()],
            cfg,
            layout,
            entry_calls,
            entries_by_callers: false,
        }
    }

    #[test]
    fn callers_come_first_and_cycles_or_strange_sites_are_refused() {
        let chain = vec![
            function("leaf", vec![site(2, 1)]),
            function("main", vec![]),
            function("mid", vec![site(1, 0), site(1, 3)]),
        ];
        assert_eq!(callers_first(&chain), [1, 2, 0]);
        assert!(check(&chain).is_ok());
        let cycle = vec![
            function("a", vec![site(1, 0)]),
            function("b", vec![site(0, 0)]),
        ];
        assert_eq!(callers_first(&cycle), [0, 1]);
        assert!(check(&cycle).unwrap_err().contains("cycle"));
        let mut uncounted = vec![function("a", vec![site(0, 0)])];
        uncounted[0].entry_calls.clear();
        assert!(check(&uncounted).unwrap_err().contains("no call sites"));
        let astray = vec![function("a", vec![site(0, 4)])];
        assert!(check(&astray).unwrap_err().contains("not in the map"));
        let astray = vec![function("a", vec![site(7, 0)])];
        assert!(check(&astray).unwrap_err().contains("not in the map"));
    }

    /// Slot values of `layout`'s counted edges for the diamond run 3 times
    /// through block 1 and twice through block 2.
    fn diamond_slots(layout: &Layout) -> Vec<u64> {
        let Layout::Edge { counted, .. } = layout else {
            panic!("an edge layout")
        };
        let edges = [3, 2, 3, 2];
        counted
            .iter()
            .map(|fe| match fe {
                FlowEdge::Entry | FlowEdge::Exit(_) => 5,
                FlowEdge::Cfg(e) => edges[e.index()],
            })
            .collect()
    }

    #[test]
    fn a_fragment_is_given_the_layout_and_counts_of_the_plan_that_counts_entries() {
        for mode in [Mode::Block, Mode::Edge] {
            let one = Cfg::from_edge_list(1, &[]).unwrap();
            let (_, caller) = plan_function(&one, mode, &PlanOptions::default()).unwrap();
            let (_, given) = plan_function(&diamond(), mode, &given()).unwrap();
            let (_, counted) = plan_function(&diamond(), mode, &PlanOptions::default()).unwrap();
            let mut leaf = function("leaf", vec![site(1, 0)]);
            leaf.layout = given.clone();
            let mut main = function("main", Vec::new());
            (main.cfg, main.blocks, main.hash) =
                (one.clone(), vec![BlockInfo::default()], one.shape_hash());
            main.layout = caller;
            let functions = vec![leaf, main];
            let map = MapFile {
                mode,
                build_id: MapFile::compute_build_id(mode, &[], &functions),
                files: Vec::new(),
                file_digests: Vec::new(),
                functions,
                atomic: false,
                per_thread: true,
                p3: None,
            };
            let mut raw = RawProfile::new(map.build_id, crate::profile::mode_number(mode));
            for (i, slots) in [diamond_slots(&given), vec![5]].into_iter().enumerate() {
                raw.functions.push(RawFunction {
                    index: i as u32,
                    hash: map.functions[i].hash,
                    slots,
                    paths: Vec::new(),
                    slot_resumes: Vec::new(),
                    path_resumes: Vec::new(),
                });
            }
            let before = crate::profile::interpret(&map, "m", &raw, "p").unwrap();
            assert_eq!(
                (before[0].entry, &before[0].edges),
                (5, &Some(vec![3, 2, 3, 2]))
            );
            let own = materialize(&map, Some(&raw), "m", "p").unwrap().unwrap();
            assert_eq!(own.map.functions[0].layout, counted, "{mode:?}");
            assert!(own.map.functions[0].entry_calls.is_empty());
            // What it was remains said, through combining too.
            let said = |m: &MapFile| {
                m.functions
                    .iter()
                    .map(|f| f.counted_by_callers())
                    .collect::<Vec<_>>()
            };
            assert_eq!(said(&own.map), [true, false]);
            let combined =
                crate::combine::combine(std::slice::from_ref(&map), &[], "m", "p").unwrap();
            assert_eq!(said(&combined.map), [true, false]);
            let section = own.section.unwrap();
            assert_eq!(section.functions[0].slots, diamond_slots(&counted));
            let after = crate::profile::interpret(&own.map, "m", &section, "p").unwrap();
            assert_eq!(after, before);
            assert!(own.doubts.is_empty());
        }
    }
}
