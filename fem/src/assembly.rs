//! The FEM inspector (pattern, element-to-block map, colouring) and the
//! allocation-free parallel executor that refreshes the operator's values.
use crate::element::{ElementStiffness, POISSON_RATIO};
use crate::error::FemError;
use crate::mesh::BoxMesh;
use ptap_sparse::par::{balanced_row_chunks, default_chunk_count, for_each_row_chunk};
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Marks a constrained node in [`Assembler::free_of_node`] and a dropped
/// coupling in [`Assembler::element_blocks`].
pub const NONE: u32 = u32::MAX;

/// Which Dirichlet condition is eliminated from the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// `u = 0` on the face `x = x_min` (lattice `ix == 0`): the beam's clamp.
    ClampXMin,
    /// Nothing eliminated: the singular pure-Neumann operator (tests).
    None,
}

/// Inspector output for one mesh: everything [`Assembler::assemble`] needs so
/// that a value refresh neither searches nor allocates.
#[derive(Clone, Debug)]
pub struct Assembler {
    /// Spatial dimension = block size.
    dim: usize,
    /// Nodes per element, `3^dim`.
    npe: usize,
    n_elements: usize,
    n_nodes: usize,
    constraint: Constraint,
    free_of_node: Vec<u32>,
    node_of_free: Vec<u32>,
    pattern: Arc<BlockPattern>,
    element_blocks: Vec<u32>,
    colour_ptr: [usize; 9],
    colour_elements: Vec<u32>,
    incidence_ptr: Vec<usize>,
    incidence: Vec<u32>,
    row_chunks: Vec<Range<usize>>,
    k_ref: ElementStiffness,
}

/// Lattice indices coupled to index `i` along one axis of Q2 nodes `0..=last`:
/// a vertex (even) touches up to two elements, a midpoint (odd) one.
#[inline]
fn coupled_range(i: usize, last: usize) -> std::ops::RangeInclusive<usize> {
    if i % 2 == 0 {
        i.saturating_sub(2)..=(i + 2).min(last)
    } else {
        i - 1..=i + 1
    }
}

impl Assembler {
    /// Builds the inspector with the spec's Poisson ratio 0.25.
    pub fn new(mesh: &BoxMesh, constraint: Constraint) -> Result<Self, FemError> {
        Self::with_poisson_ratio(mesh, constraint, POISSON_RATIO)
    }

    /// Builds the inspector for Poisson ratio `nu`: free-node numbering, the
    /// block pattern over free nodes (two nodes couple when they share an
    /// element), the element-to-block map, the 8-colouring (4 in 2D) and each node's
    /// element incidence in colour order (what the row-parallel executor walks).
    pub fn with_poisson_ratio(mesh: &BoxMesh, constraint: Constraint, nu: f64) -> Result<Self, FemError> {
        Self::build(mesh, constraint, nu, mesh.element_size())
    }

    /// [`Assembler::new`] for a part of a larger mesh of congruent elements
    /// whose edges `h` are the larger mesh's: the reference stiffness is then
    /// bitwise the larger mesh's (the part's own box need not give `h` to the
    /// last bit). A rank's slab of the beam ([`crate::BeamSlab`]) uses it.
    pub fn with_element_size(mesh: &BoxMesh, constraint: Constraint, h: [f64; 3]) -> Result<Self, FemError> {
        Self::build(mesh, constraint, POISSON_RATIO, h)
    }

    fn build(mesh: &BoxMesh, constraint: Constraint, nu: f64, h: [f64; 3]) -> Result<Self, FemError> {
        if !(nu > -1.0 && nu < 0.5) {
            return Err(FemError::BadPoissonRatio { nu });
        }
        let n_nodes = mesh.n_nodes();
        let n_elements = mesh.n_elements();
        if n_elements >= NONE as usize {
            return Err(FemError::TooLarge {
                what: format!("{n_elements} elements"),
            });
        }
        let (dim, npe) = (mesh.dim(), mesh.nodes_per_element());
        let last = mesh.nodes_per_dim().map(|n| n - 1);

        // Free numbering keeps the global order, so it is monotone: sorted
        // global columns stay sorted after renumbering.
        let mut free_of_node = vec![NONE; n_nodes];
        let mut node_of_free = Vec::with_capacity(n_nodes);
        for (id, f) in free_of_node.iter_mut().enumerate() {
            let constrained = match constraint {
                Constraint::ClampXMin => mesh.node_lattice(id)[0] == 0,
                Constraint::None => false,
            };
            if !constrained {
                *f = node_of_free.len() as u32;
                node_of_free.push(id as u32);
            }
        }
        let n_free = node_of_free.len();

        // Row r couples to the free nodes of a lattice box (tensor product of 1D ranges).
        let row_box = |r: usize| {
            let l = mesh.node_lattice(node_of_free[r] as usize);
            [
                coupled_range(l[0], last[0]),
                coupled_range(l[1], last[1]),
                coupled_range(l[2], last[2]),
            ]
        };
        let for_each_col = |r: usize, f: &mut dyn FnMut(u32)| {
            let [rx, ry, rz] = row_box(r);
            for jx in rx {
                for jy in ry.clone() {
                    for jz in rz.clone() {
                        let c = free_of_node[mesh.node_id([jx, jy, jz])];
                        if c != NONE {
                            f(c);
                        }
                    }
                }
            }
        };
        let counts: Vec<usize> = (0..n_free)
            .into_par_iter()
            .map(|r| {
                let mut n = 0;
                for_each_col(r, &mut |_| n += 1);
                n
            })
            .collect();
        let mut row_ptr = Vec::with_capacity(n_free + 1);
        row_ptr.push(0usize);
        for c in &counts {
            row_ptr.push(row_ptr.last().unwrap() + c);
        }
        let nnzb = row_ptr[n_free];
        if nnzb >= NONE as usize {
            return Err(FemError::TooLarge {
                what: format!("{nnzb} blocks"),
            });
        }
        let mut col_idx = vec![0u32; nnzb];
        {
            let mut rows: Vec<&mut [u32]> = Vec::with_capacity(n_free);
            let mut rest = col_idx.as_mut_slice();
            for c in &counts {
                let (head, tail) = rest.split_at_mut(*c);
                rows.push(head);
                rest = tail;
            }
            rows.into_par_iter().enumerate().for_each(|(r, out)| {
                let mut k = 0;
                for_each_col(r, &mut |c| {
                    out[k] = c;
                    k += 1;
                });
            });
        }
        drop(counts);
        let pattern = Arc::new(BlockPattern::new(n_free, n_free, row_ptr, col_idx)?);

        // Element map: for each (a, b) the block index, searched once here.
        let mut element_blocks = vec![NONE; n_elements * npe * npe];
        element_blocks
            .par_chunks_mut(npe * npe)
            .enumerate()
            .for_each(|(e, map)| {
                let free: Vec<u32> = mesh
                    .element_nodes(e)
                    .iter()
                    .map(|&n| free_of_node[n as usize])
                    .collect();
                for (a, &row) in free.iter().enumerate() {
                    if row == NONE {
                        continue;
                    }
                    let range = pattern.row_range(row as usize);
                    let cols = pattern.row(row as usize);
                    // Columns of b = 0..npe increase, so each search starts past the last hit.
                    let mut pos = 0;
                    for (b, &col) in free.iter().enumerate() {
                        if col == NONE {
                            continue;
                        }
                        let off = cols[pos..]
                            .binary_search(&col)
                            .expect("element couplings are in the pattern by construction");
                        pos += off;
                        map[a * npe + b] = (range.start + pos) as u32;
                    }
                }
            });

        // Elements of equal (ex, ey, ez) parity are at least one element apart
        // in some direction, so they share no node and hence no block.
        let mut colour_ptr = [0usize; 9];
        let colour_of = |e: usize| {
            let [ex, ey, ez] = mesh.element_lattice(e);
            (ex % 2) * 4 + (ey % 2) * 2 + ez % 2
        };
        for e in 0..n_elements {
            colour_ptr[colour_of(e) + 1] += 1;
        }
        for c in 0..8 {
            colour_ptr[c + 1] += colour_ptr[c];
        }
        let mut next = colour_ptr;
        let mut colour_elements = vec![0u32; n_elements];
        for e in 0..n_elements {
            let c = colour_of(e);
            colour_elements[next[c]] = e as u32;
            next[c] += 1;
        }

        // Incidence in colour order: for each free node, `e * npe + a` of every
        // element e holding it as local node a. A node lies in at most one
        // element per colour, so this order is the colour order of `assemble_coloured`.
        if n_elements.checked_mul(npe).is_none_or(|v| v >= NONE as usize) {
            return Err(FemError::TooLarge {
                what: format!("{n_elements} elements x {npe} local nodes"),
            });
        }
        let mut incidence_ptr = vec![0usize; n_free + 1];
        for &e in &colour_elements {
            for n in mesh.element_nodes(e as usize) {
                let r = free_of_node[n as usize];
                if r != NONE {
                    incidence_ptr[r as usize + 1] += 1;
                }
            }
        }
        for r in 0..n_free {
            incidence_ptr[r + 1] += incidence_ptr[r];
        }
        let mut fill = incidence_ptr.clone();
        let mut incidence = vec![0u32; incidence_ptr[n_free]];
        for &e in &colour_elements {
            for (a, n) in mesh.element_nodes(e as usize).into_iter().enumerate() {
                let r = free_of_node[n as usize];
                if r != NONE {
                    incidence[fill[r as usize]] = e * npe as u32 + a as u32;
                    fill[r as usize] += 1;
                }
            }
        }
        drop(fill);
        let work: Vec<usize> = (0..n_free).map(|r| pattern.row_range(r).len()).collect();
        let row_chunks = balanced_row_chunks(&work, default_chunk_count(n_free));

        let k_ref = ElementStiffness::for_dim(dim, h, nu);
        Ok(Self {
            dim,
            npe,
            n_elements,
            n_nodes,
            constraint,
            free_of_node,
            node_of_free,
            pattern,
            element_blocks,
            colour_ptr,
            colour_elements,
            incidence_ptr,
            incidence,
            row_chunks,
            k_ref,
        })
    }

    /// The block pattern of the assembled operator over the free nodes.
    pub fn pattern(&self) -> Arc<BlockPattern> {
        Arc::clone(&self.pattern)
    }
    /// An all-zero operator over [`Assembler::pattern`] (`dim x dim` blocks), ready for [`Assembler::assemble`].
    pub fn zero_matrix(&self) -> BlockCsr {
        BlockCsr::zeros(self.pattern(), self.dim, self.dim)
    }
    /// Spatial dimension = block size (3 or 2).
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Nodes per element (27 or 9).
    pub fn nodes_per_element(&self) -> usize {
        self.npe
    }
    pub fn constraint(&self) -> Constraint {
        self.constraint
    }
    pub fn n_elements(&self) -> usize {
        self.n_elements
    }
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }
    /// Free (unknown) nodes = block rows.
    pub fn n_free(&self) -> usize {
        self.node_of_free.len()
    }
    /// Scalar unknowns, `dim * n_free`.
    pub fn n_dofs(&self) -> usize {
        self.dim * self.n_free()
    }
    /// Free index of each mesh node ([`NONE`] where constrained).
    pub fn free_of_node(&self) -> &[u32] {
        &self.free_of_node
    }
    /// Mesh node of each free index.
    pub fn node_of_free(&self) -> &[u32] {
        &self.node_of_free
    }
    /// Block index of each (a, b) node pair of element `e` (`a * npe + b`;
    /// [`NONE`] where either node is constrained).
    pub fn element_blocks(&self, e: usize) -> &[u32] {
        let pairs = self.npe * self.npe;
        &self.element_blocks[e * pairs..(e + 1) * pairs]
    }
    /// Elements of colour `c` (0..8; the odd colours are empty in 2D); no two of them share a node.
    pub fn colour(&self, c: usize) -> &[u32] {
        &self.colour_elements[self.colour_ptr[c]..self.colour_ptr[c + 1]]
    }
    /// The whole element map: [`Assembler::element_blocks`] of every element, in element order.
    pub fn element_map(&self) -> &[u32] {
        &self.element_blocks
    }
    /// Each free node's element incidence in colour order, `e * npe + a` per entry
    /// (node `r`'s entries are `incidence[ptr[r]..ptr[r + 1]]`): the order [`Assembler::assemble`] sums in.
    pub fn incidence(&self) -> (&[usize], &[u32]) {
        (&self.incidence_ptr, &self.incidence)
    }
    /// Unit-modulus element stiffness shared by every element.
    pub fn reference_stiffness(&self) -> &ElementStiffness {
        &self.k_ref
    }
    /// Bytes held by the inspector (map, numbering, colouring, incidence; pattern excluded).
    pub fn bytes(&self) -> usize {
        4 * (self.element_blocks.len()
            + self.free_of_node.len()
            + self.node_of_free.len()
            + self.colour_elements.len()
            + self.incidence.len())
            + 8 * self.incidence_ptr.len()
    }

    /// Checks a per-element modulus field: one finite positive value per element.
    pub fn check_modulus(&self, modulus: &[f64]) -> Result<(), FemError> {
        if modulus.len() != self.n_elements {
            return Err(FemError::ModulusLength {
                got: modulus.len(),
                expected: self.n_elements,
            });
        }
        if let Some((element, &value)) = modulus.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v > 0.0)) {
            return Err(FemError::BadModulus { element, value });
        }
        Ok(())
    }

    fn check_matrix(&self, modulus: &[f64], a: &BlockCsr) -> Result<(), FemError> {
        self.check_modulus(modulus)?;
        let same = Arc::ptr_eq(a.pattern_arc(), &self.pattern) || *a.pattern() == *self.pattern;
        if a.block_shape() != (self.dim, self.dim) || !same {
            return Err(FemError::MatrixMismatch);
        }
        Ok(())
    }

    /// Overwrites `a`'s values with `sum_e E_e K_ref`.
    ///
    /// Row-parallel gather: each block row is zeroed, then visits the elements
    /// of its node (at most 8) in colour order and adds their `npe` blocks through
    /// the element map. Every block is written by one thread and sums its
    /// contributions in colour order, so the result is bitwise independent of
    /// thread count and equal to [`Assembler::assemble_coloured`]'s; but the
    /// value array is swept once instead of once per colour.
    pub fn assemble(&self, modulus: &[f64], a: &mut BlockCsr) -> Result<(), FemError> {
        self.check_matrix(modulus, a)?;
        match self.dim {
            3 => self.gather::<9>(modulus, a),
            _ => self.gather::<4>(modulus, a),
        }
        Ok(())
    }

    /// [`Assembler::assemble`]'s kernel for `BB = dim^2` scalars per block
    /// (a constant, so the block update unrolls as it did for 3D alone).
    fn gather<const BB: usize>(&self, modulus: &[f64], a: &mut BlockCsr) {
        let npe = self.npe;
        let row_ptr = self.pattern.row_ptr();
        let k_ref = self.k_ref.blocks();
        let mut scratch = vec![(); self.row_chunks.len()]; // zero-sized: no allocation
        let gather = |rows: Range<usize>, vals: &mut [f64], _: &mut ()| {
            let base = row_ptr[rows.start];
            vals.fill(0.0);
            for r in rows {
                for &ea in &self.incidence[self.incidence_ptr[r]..self.incidence_ptr[r + 1]] {
                    let (ea, a) = (ea as usize, ea as usize % npe);
                    let s = modulus[ea / npe];
                    let map = &self.element_blocks[ea * npe..ea * npe + npe];
                    let k_row = &k_ref[a * npe * BB..(a + 1) * npe * BB];
                    for (&blk, src) in map.iter().zip(k_row.chunks_exact(BB)) {
                        if blk == NONE {
                            continue;
                        }
                        let off = (blk as usize - base) * BB;
                        for (d, k) in vals[off..off + BB].iter_mut().zip(src) {
                            *d += s * k;
                        }
                    }
                }
            }
        };
        for_each_row_chunk(&self.row_chunks, row_ptr, BB, a.values_mut(), &mut scratch, &gather);
    }

    /// The same values as [`Assembler::assemble`] (bitwise) by element-parallel
    /// scatter: colours in sequence, the elements of one colour in parallel
    /// (no two share a node, hence no block). Kept as the reference for the
    /// colouring contract; it sweeps the value array once per colour.
    pub fn assemble_coloured(&self, modulus: &[f64], a: &mut BlockCsr) -> Result<(), FemError> {
        self.check_matrix(modulus, a)?;
        let values = a.values_mut();
        values.par_chunks_mut(1 << 14).for_each(|c| c.fill(0.0));
        let out = SharedValues(values.as_mut_ptr());
        let k_ref = self.k_ref.blocks();
        let bb = self.dim * self.dim;
        for c in 0..8 {
            self.colour(c).par_iter().with_min_len(4).for_each(|&e| {
                let e = e as usize;
                let s = modulus[e];
                for (&blk, src) in self.element_blocks(e).iter().zip(k_ref.chunks_exact(bb)) {
                    if blk == NONE {
                        continue;
                    }
                    // SAFETY: `blk` indexes a block of `values` (the map was built
                    // against this pattern, checked above), and within one colour
                    // no two elements share a node, so no two threads touch the
                    // same block; colours are separated by the join of `for_each`.
                    let dst = unsafe { std::slice::from_raw_parts_mut(out.ptr().add(blk as usize * bb), bb) };
                    for (d, k) in dst.iter_mut().zip(src) {
                        *d += s * k;
                    }
                }
            });
        }
        Ok(())
    }
}

/// The values pointer shared by the threads of one colour.
struct SharedValues(*mut f64);
// SAFETY: only used in `assemble_coloured`, where the threads of one colour write
// through it to disjoint blocks (no two elements of a colour share a node).
unsafe impl Sync for SharedValues {}
unsafe impl Send for SharedValues {}
impl SharedValues {
    /// A method (not field access) so closures capture the whole `Sync` wrapper.
    #[inline]
    fn ptr(&self) -> *mut f64 {
        self.0
    }
}
