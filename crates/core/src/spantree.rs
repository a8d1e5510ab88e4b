//! Maximum spanning trees (forests) of an undirected multigraph by Kruskal's
//! algorithm with union-find. Used to pick the edges that need no counter
//! (Ball-Larus 1996 section 3.3; Knuth & Stevenson 1973).
//!
//! `forced` edges are taken first, in order (when they form a cycle, the later one
//! is left out and the caller sees it as a chord); then the rest by decreasing
//! weight, ties broken by lower index. Self loops are never tree edges.

/// One undirected edge for [`max_spanning_tree`].
#[derive(Clone, Copy, Debug)]
pub struct TreeEdge {
    pub a: usize,
    pub b: usize,
    pub weight: f64,
    pub forced: bool,
}

/// Which edges are in the tree.
pub fn max_spanning_tree(num_nodes: usize, edges: &[TreeEdge]) -> Vec<bool> {
    let mut parent: Vec<usize> = (0..num_nodes).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by(|&i, &j| {
        edges[j]
            .forced
            .cmp(&edges[i].forced)
            .then_with(|| {
                if edges[i].forced {
                    std::cmp::Ordering::Equal
                } else {
                    edges[j].weight.total_cmp(&edges[i].weight)
                }
            })
            .then(i.cmp(&j))
    });
    let mut in_tree = vec![false; edges.len()];
    for i in order {
        let (ra, rb) = (find(&mut parent, edges[i].a), find(&mut parent, edges[i].b));
        if ra != rb {
            parent[ra] = rb;
            in_tree[i] = true;
        }
    }
    in_tree
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(a: usize, b: usize, weight: f64) -> TreeEdge {
        TreeEdge {
            a,
            b,
            weight,
            forced: false,
        }
    }

    #[test]
    fn keeps_heavy_edges_and_forced_ones() {
        // triangle 0-1-2: the lightest edge becomes the chord
        assert_eq!(
            max_spanning_tree(3, &[e(0, 1, 5.0), e(1, 2, 1.0), e(2, 0, 3.0)]),
            vec![true, false, true]
        );
        let mut forced = e(1, 2, 0.0);
        forced.forced = true;
        assert_eq!(
            max_spanning_tree(3, &[e(0, 1, 5.0), forced, e(2, 0, 3.0)]),
            vec![true, true, false]
        );
        // self loops and parallel edges
        assert_eq!(
            max_spanning_tree(2, &[e(0, 0, 9.0), e(0, 1, 1.0), e(0, 1, 2.0)]),
            vec![false, false, true]
        );
    }
}
