//! The inspector of a row-partitioned block matrix: one rank's rows with
//! local column numbers, its ghost columns, and the halo plan that fills them.
//!
//! **Local numbering.** Rank `r` owns global block rows `rows = R.range(r)`
//! and global block columns `cols = C.range(r)` (`R == C` for a square
//! operator). Its local columns are its owned columns first (`g - cols.start`,
//! so the owned part of a vector is the prefix of the local one), then its
//! ghost columns: every other global column its rows touch, sorted by global
//! index, which (the partition being contiguous) groups them by owner rank in
//! rank order. A local vector is `[owned | ghosts]`, `bc` scalars per column.
//!
//! **Entry order.** Each local row keeps its entries in the global matrix's
//! order (increasing *global* column), so local column numbers within a row
//! are not monotone where a row touches a lower rank's ghosts. The local
//! product therefore adds a row's blocks in the same order as the global
//! [`ptap_sparse::spmv`], and is bitwise equal to it; and a rank's values are
//! one contiguous slice of the global values (its rows are contiguous), so a
//! refresh is a copy.
//!
//! **Interior and boundary rows.** A row with no ghost column is interior: its
//! product reads owned entries only and runs while the halo is in flight; the
//! boundary rows run after it has arrived ([`DistMatrix::spmv`]).
//!
//! **Halo plan.** For each neighbour that owns some of my ghosts, one receive
//! [`Link`]: a contiguous range of the ghost tail (ghosts are grouped by
//! owner), so received values land in place, with no unpacking. For each
//! neighbour that needs some of my owned columns, one send [`Link`] into the
//! plan's send buffer and the list of owned columns packed there. The plan is
//! built once ([`HaloPlan::build`]: each rank tells the owners which ghosts it
//! needs through one all-to-all); an exchange packs, sends and receives into
//! buffers that already exist and allocates nothing.
use crate::comm::{Comm, Link};
use crate::partition::Partition;
use crate::DistError;
use ptap_sparse::dense::gemv_acc_dyn;
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::ops::Range;

/// Rows per rayon task in the local products.
const MIN_ROWS_PER_TASK: usize = 256;
/// Block rows of the products' stack accumulator.
const MAX_BLOCK_ROWS: usize = 64;

/// One rank's block rows, columns in local numbering (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct LocalMatrix {
    rank: usize,
    rows: Range<usize>,
    cols: Range<usize>,
    br: usize,
    bc: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<u32>,
    values: Vec<f64>,
    ghosts: Vec<u64>,
    boundary: Vec<bool>,
    n_boundary: usize,
}

impl LocalMatrix {
    /// Rank `rank`'s rows of the global `a` (row partition `rows`, column
    /// partition `cols`; the inspector working on a global pattern, as the
    /// tests and this slice's whole-beam-per-rank assembly do).
    pub fn from_global(a: &BlockCsr, rows: &Partition, cols: &Partition, rank: usize) -> Result<Self, DistError> {
        check_partitions(a.pattern(), rows, cols)?;
        let p = a.pattern();
        let range = rows.range(rank);
        let (k0, k1) = (p.row_ptr()[range.start], p.row_ptr()[range.end]);
        let row_ptr: Vec<usize> = p.row_ptr()[range.start..=range.end].iter().map(|&k| k - k0).collect();
        let (br, bc) = a.block_shape();
        let l = br * bc;
        Self::from_rows(
            rank,
            rows,
            cols,
            (br, bc),
            row_ptr,
            &p.col_idx()[k0..k1],
            a.values()[k0 * l..k1 * l].to_vec(),
        )
    }

    /// Rank `rank`'s rows given by the rank itself: `row_ptr` over its
    /// `rows.range(rank).len()` rows, their *global* block columns (strictly
    /// increasing within each row) and their `br x bc` blocks in that order.
    pub fn from_rows(
        rank: usize,
        rows: &Partition,
        cols: &Partition,
        (br, bc): (usize, usize),
        row_ptr: Vec<usize>,
        global_cols: &[u32],
        values: Vec<f64>,
    ) -> Result<Self, DistError> {
        let bad = |why: String| Err(DistError::Matrix { why });
        if rows.ranks() != cols.ranks() || rank >= rows.ranks() {
            return bad(format!(
                "rank {rank} of row and column partitions over {} and {} ranks",
                rows.ranks(),
                cols.ranks()
            ));
        }
        if br == 0 || bc == 0 || br > MAX_BLOCK_ROWS {
            return bad(format!(
                "{br}x{bc} blocks (rows 1..={MAX_BLOCK_ROWS}, columns at least 1)"
            ));
        }
        let (range, crange) = (rows.range(rank), cols.range(rank));
        let n = range.len();
        if row_ptr.len() != n + 1 || row_ptr[0] != 0 || row_ptr.windows(2).any(|w| w[1] < w[0]) {
            return bad(format!("row pointers of rank {rank} do not describe its {n} rows"));
        }
        let nnzb = row_ptr[n];
        if global_cols.len() != nnzb || values.len() != nnzb * br * bc {
            return bad(format!(
                "{} column indices and {} values for {nnzb} blocks of {br}x{bc}",
                global_cols.len(),
                values.len()
            ));
        }
        let ncols = cols.nrows();
        for i in 0..n {
            let c = &global_cols[row_ptr[i]..row_ptr[i + 1]];
            if c.iter().any(|&j| j as usize >= ncols) || c.windows(2).any(|w| w[1] <= w[0]) {
                return bad(format!(
                    "global row {}: columns must increase and stay below {ncols}",
                    range.start + i
                ));
            }
        }
        let owned = |j: u32| crange.contains(&(j as usize));
        let mut ghosts: Vec<u64> = global_cols.iter().filter(|&&j| !owned(j)).map(|&j| j as u64).collect();
        ghosts.sort_unstable();
        ghosts.dedup();
        let n_owned_cols = crange.len();
        if n_owned_cols + ghosts.len() > u32::MAX as usize {
            return bad("more than 2^32 local columns".into());
        }
        let col_idx: Vec<u32> = global_cols
            .iter()
            .map(|&j| {
                if owned(j) {
                    (j as usize - crange.start) as u32
                } else {
                    let g = ghosts.binary_search(&(j as u64)).expect("every ghost is listed");
                    (n_owned_cols + g) as u32
                }
            })
            .collect();
        let boundary: Vec<bool> = (0..n)
            .map(|i| {
                col_idx[row_ptr[i]..row_ptr[i + 1]]
                    .iter()
                    .any(|&c| c as usize >= n_owned_cols)
            })
            .collect();
        let n_boundary = boundary.iter().filter(|&&b| b).count();
        Ok(Self {
            rank,
            rows: range,
            cols: crange,
            br,
            bc,
            row_ptr,
            col_idx,
            values,
            ghosts,
            boundary,
            n_boundary,
        })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The global block rows this rank owns.
    pub fn rows(&self) -> Range<usize> {
        self.rows.clone()
    }
    /// The global block columns this rank owns.
    pub fn owned_cols(&self) -> Range<usize> {
        self.cols.clone()
    }
    pub fn block_shape(&self) -> (usize, usize) {
        (self.br, self.bc)
    }
    pub fn n_rows(&self) -> usize {
        self.rows.len()
    }
    pub fn n_owned_cols(&self) -> usize {
        self.cols.len()
    }
    pub fn n_ghosts(&self) -> usize {
        self.ghosts.len()
    }
    /// Owned plus ghost columns: the block length of an input vector.
    pub fn n_local_cols(&self) -> usize {
        self.cols.len() + self.ghosts.len()
    }
    /// Global index of each ghost column, ascending (local column
    /// `n_owned_cols() + g` is global `ghosts()[g]`).
    pub fn ghosts(&self) -> &[u64] {
        &self.ghosts
    }
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }
    /// Local column of each block, in the global matrix's entry order.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    pub fn nnzb(&self) -> usize {
        self.col_idx.len()
    }
    /// Whether local row `i` reads a ghost column.
    pub fn is_boundary(&self, i: usize) -> bool {
        self.boundary[i]
    }
    /// Rows that read a ghost column.
    pub fn n_boundary(&self) -> usize {
        self.n_boundary
    }
    /// The global column of local column `c`.
    pub fn global_col(&self, c: usize) -> usize {
        if c < self.cols.len() {
            self.cols.start + c
        } else {
            self.ghosts[c - self.cols.len()] as usize
        }
    }

    /// Replaces the values (same pattern): this rank's contiguous slice of
    /// the global values, in the same order.
    pub fn set_values(&mut self, values: &[f64]) -> Result<(), DistError> {
        if values.len() != self.values.len() {
            return Err(DistError::Matrix {
                why: format!("{} values for {} of this rank", values.len(), self.values.len()),
            });
        }
        self.values.copy_from_slice(values);
        Ok(())
    }

    /// The block of local row `i` on the global diagonal, if stored
    /// (square partitions: rows and owned columns coincide).
    pub fn diagonal_block(&self, i: usize) -> Option<&[f64]> {
        let g = self.rows.start + i;
        if !self.cols.contains(&g) {
            return None;
        }
        let c = (g - self.cols.start) as u32;
        let l = self.br * self.bc;
        (self.row_ptr[i]..self.row_ptr[i + 1])
            .find(|&k| self.col_idx[k] == c)
            .map(|k| &self.values[k * l..(k + 1) * l])
    }

    /// `y_i = (A x)_i` for the rows whose boundary flag is `boundary`; other
    /// rows of `y` are left as they are. `x` holds at least the columns those
    /// rows read (the owned prefix suffices for interior rows). Adds each
    /// row's blocks in order into a zeroed accumulator, as
    /// [`ptap_sparse::spmv`] does.
    pub fn product_rows(&self, x: &[f64], y: &mut [f64], boundary: bool) {
        let (br, bc) = (self.br, self.bc);
        assert_eq!(y.len(), self.n_rows() * br, "y has the wrong length");
        // The hierarchies' block shapes get an unrolled loop: the same
        // operations in the same order as the size-generic one (same bits).
        match (br, bc) {
            (1, 1) => return self.product_rows_fixed::<1, 1>(x, y, boundary),
            (3, 3) => return self.product_rows_fixed::<3, 3>(x, y, boundary),
            (6, 6) => return self.product_rows_fixed::<6, 6>(x, y, boundary),
            (3, 6) => return self.product_rows_fixed::<3, 6>(x, y, boundary),
            _ => {}
        }
        let l = br * bc;
        y.par_chunks_mut(br)
            .with_min_len(MIN_ROWS_PER_TASK)
            .enumerate()
            .for_each(|(i, yi)| {
                if self.boundary[i] != boundary {
                    return;
                }
                let mut acc = [0.0f64; MAX_BLOCK_ROWS];
                let acc = &mut acc[..br];
                for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                    let j = self.col_idx[k] as usize;
                    gemv_acc_dyn(br, bc, &self.values[k * l..(k + 1) * l], &x[j * bc..(j + 1) * bc], acc);
                }
                yi.copy_from_slice(acc);
            });
    }

    /// [`LocalMatrix::product_rows`] for `R x C` blocks known at compile time.
    fn product_rows_fixed<const R: usize, const C: usize>(&self, x: &[f64], y: &mut [f64], boundary: bool) {
        y.par_chunks_mut(R)
            .with_min_len(MIN_ROWS_PER_TASK)
            .enumerate()
            .for_each(|(i, yi)| {
                if self.boundary[i] != boundary {
                    return;
                }
                let mut acc = [0.0f64; R];
                for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                    let j = self.col_idx[k] as usize;
                    let (blk, xj) = (&self.values[k * R * C..(k + 1) * R * C], &x[j * C..j * C + C]);
                    for r in 0..R {
                        let row = &blk[r * C..(r + 1) * C];
                        let mut s = row[0] * xj[0];
                        for c in 1..C {
                            s += row[c] * xj[c];
                        }
                        acc[r] += s;
                    }
                }
                yi.copy_from_slice(&acc);
            });
    }
}

fn check_partitions(p: &BlockPattern, rows: &Partition, cols: &Partition) -> Result<(), DistError> {
    if rows.nrows() != p.nrows() || cols.nrows() != p.ncols() {
        return Err(DistError::Partition {
            why: format!(
                "partitions of {} rows and {} columns for a {}x{} block matrix",
                rows.nrows(),
                cols.nrows(),
                p.nrows(),
                p.ncols()
            ),
        });
    }
    Ok(())
}

/// Who sends what to whom when a rank's ghosts are filled (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct HaloPlan {
    bc: usize,
    n_owned_cols: usize,
    sends: Vec<Link>,
    send_cols: Vec<u32>,
    send_buf: Vec<f64>,
    recvs: Vec<Link>,
}

impl HaloPlan {
    /// The distributed inspector: each rank sends the owners the global
    /// indices of the ghosts it needs (one [`Comm::all_to_all_u64`]) and
    /// learns from the answers what to send. Collective.
    pub fn build<C: Comm + ?Sized>(local: &LocalMatrix, cols: &Partition, comm: &C) -> Result<Self, DistError> {
        if comm.size() != cols.ranks() || comm.rank() != local.rank {
            return Err(DistError::Plan {
                why: format!(
                    "rank {} of {} building the plan of rank {} of a {}-rank partition",
                    comm.rank(),
                    comm.size(),
                    local.rank,
                    cols.ranks()
                ),
            });
        }
        let wanted = comm.all_to_all_u64(&Self::requests(local, cols));
        Self::from_requests(local, cols, wanted)
    }

    /// The plan of `local`'s ghosts moving `width` scalars per column instead
    /// of the block's `bc` (node data: strength diagonals, aggregation
    /// states, rows of the tentative prolongator). Collective.
    pub fn build_with_width<C: Comm + ?Sized>(
        local: &LocalMatrix,
        cols: &Partition,
        width: usize,
        comm: &C,
    ) -> Result<Self, DistError> {
        if width == 0 {
            return Err(DistError::Plan {
                why: "a halo of zero scalars per column".into(),
            });
        }
        let mut plan = Self::build(local, cols, comm)?;
        let bc = plan.bc;
        let rescale = |l: &mut Link| {
            l.start = l.start / bc * width;
            l.len = l.len / bc * width;
        };
        plan.sends.iter_mut().for_each(rescale);
        plan.recvs.iter_mut().for_each(rescale);
        plan.send_buf = vec![0.0; plan.send_cols.len() * width];
        plan.bc = width;
        Ok(plan)
    }

    /// Scalars per column this plan moves.
    pub fn width(&self) -> usize {
        self.bc
    }
    /// Owned columns of the vectors it fills.
    pub fn n_owned_cols(&self) -> usize {
        self.n_owned_cols
    }
    /// Scalars of the ghost tail.
    pub fn ghost_len(&self) -> usize {
        self.recvs.last().map_or(0, |l| l.start + l.len)
    }
    /// Scalars of the send buffer (what the neighbours read from this rank).
    pub fn send_len(&self) -> usize {
        self.send_buf.len()
    }

    /// The reverse of [`HaloPlan::exchange`]: each rank's ghost tail of `x`
    /// goes back to the owners, which add it into their owned columns
    /// (contributions summed in the order of the send links, i.e. by rank;
    /// deterministic). `recv` is scratch of [`HaloPlan::send_len`] scalars.
    /// Collective over the neighbours; allocates nothing.
    pub fn reverse_add<C: Comm + ?Sized>(&self, comm: &C, x: &mut [f64], recv: &mut [f64]) {
        let bc = self.bc;
        let n = self.n_owned_cols * bc;
        assert_eq!(x.len(), n + self.ghost_len(), "x must hold the owned and ghost columns");
        assert_eq!(recv.len(), self.send_buf.len(), "recv must match the send buffer");
        let (owned, ghosts) = x.split_at_mut(n);
        comm.exchange(&self.recvs, ghosts, &self.sends, recv, &mut || {});
        for (k, &c) in self.send_cols.iter().enumerate() {
            let c = c as usize;
            for (o, v) in owned[c * bc..(c + 1) * bc].iter_mut().zip(&recv[k * bc..(k + 1) * bc]) {
                *o += v;
            }
        }
    }

    /// What this rank asks each owner for: entry `q` lists the global
    /// columns of its ghosts that rank `q` owns, ascending (the inspector's
    /// outgoing half of [`HaloPlan::build`]).
    pub fn requests(local: &LocalMatrix, cols: &Partition) -> Vec<Vec<u64>> {
        let mut requests = vec![Vec::new(); cols.ranks()];
        for &g in &local.ghosts {
            requests[cols.owner(g as usize)].push(g);
        }
        requests
    }

    /// The same plan computed from the global pattern, without communication
    /// (what the other ranks' ghosts are is read off their rows).
    pub fn from_global(
        a: &BlockPattern,
        rows: &Partition,
        cols: &Partition,
        local: &LocalMatrix,
    ) -> Result<Self, DistError> {
        check_partitions(a, rows, cols)?;
        let me = local.owned_cols();
        let wanted = (0..rows.ranks())
            .map(|q| {
                if q == local.rank {
                    return Vec::new();
                }
                let theirs = cols.range(q);
                let rr = rows.range(q);
                let mut w: Vec<u64> = a.col_idx()[a.row_ptr()[rr.start]..a.row_ptr()[rr.end]]
                    .iter()
                    .map(|&j| j as usize)
                    .filter(|j| me.contains(j) && !theirs.contains(j))
                    .map(|j| j as u64)
                    .collect();
                w.sort_unstable();
                w.dedup();
                w
            })
            .collect();
        Self::from_requests(local, cols, wanted)
    }

    /// The plan from the requests this rank received: `wanted[q]` lists the
    /// global columns rank `q` needs from it, ascending (the incoming half
    /// of [`HaloPlan::build`]).
    pub fn from_requests(local: &LocalMatrix, cols: &Partition, wanted: Vec<Vec<u64>>) -> Result<Self, DistError> {
        let bc = local.bc;
        let me = local.owned_cols();
        let mut sends = Vec::new();
        let mut send_cols = Vec::new();
        for (q, list) in wanted.into_iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            if q == local.rank {
                return Err(DistError::Plan {
                    why: format!("rank {q} asked itself for columns"),
                });
            }
            let start = send_cols.len() * bc;
            for g in list {
                if !me.contains(&(g as usize)) {
                    return Err(DistError::Plan {
                        why: format!(
                            "rank {q} asked rank {} for column {g}, which it does not own",
                            local.rank
                        ),
                    });
                }
                send_cols.push((g as usize - me.start) as u32);
            }
            sends.push(Link {
                rank: q,
                start,
                len: send_cols.len() * bc - start,
            });
        }
        // Ghosts are sorted by global index, so each owner's are contiguous.
        let mut recvs: Vec<Link> = Vec::new();
        for (i, &g) in local.ghosts.iter().enumerate() {
            let q = cols.owner(g as usize);
            match recvs.last_mut() {
                Some(l) if l.rank == q => l.len += bc,
                _ => recvs.push(Link {
                    rank: q,
                    start: i * bc,
                    len: bc,
                }),
            }
        }
        Ok(Self {
            bc,
            n_owned_cols: local.n_owned_cols(),
            send_buf: vec![0.0; send_cols.len() * bc],
            sends,
            send_cols,
            recvs,
        })
    }

    /// Messages this rank sends (scalar ranges of the send buffer), by rank.
    pub fn sends(&self) -> &[Link] {
        &self.sends
    }
    /// Messages this rank receives (scalar ranges of the ghost tail), by rank.
    pub fn recvs(&self) -> &[Link] {
        &self.recvs
    }
    /// The owned (local) block columns packed for send link `s`, in order.
    pub fn send_columns(&self, s: usize) -> &[u32] {
        let l = self.sends[s];
        &self.send_cols[l.start / self.bc..(l.start + l.len) / self.bc]
    }
    /// Ranks this one exchanges with (either way).
    pub fn neighbours(&self) -> Vec<usize> {
        let mut n: Vec<usize> = self.sends.iter().chain(&self.recvs).map(|l| l.rank).collect();
        n.sort_unstable();
        n.dedup();
        n
    }

    /// Fills the ghost tail of `x` (`[owned | ghosts]`, `bc` scalars per
    /// column) from the neighbours, running `overlap(owned part of x)` while
    /// the messages are in flight. Collective over the neighbours; allocates
    /// nothing.
    pub fn exchange<C: Comm + ?Sized>(&mut self, comm: &C, x: &mut [f64], overlap: &mut dyn FnMut(&[f64])) {
        let bc = self.bc;
        let n = self.n_owned_cols * bc;
        let ghost_len = self.recvs.last().map_or(0, |l| l.start + l.len);
        assert_eq!(x.len(), n + ghost_len, "x must hold the owned and ghost columns");
        for (k, &c) in self.send_cols.iter().enumerate() {
            let c = c as usize;
            self.send_buf[k * bc..(k + 1) * bc].copy_from_slice(&x[c * bc..(c + 1) * bc]);
        }
        let (owned, ghosts) = x.split_at_mut(n);
        let owned: &[f64] = owned;
        comm.exchange(&self.sends, &self.send_buf, &self.recvs, ghosts, &mut || overlap(owned));
    }
}

/// A rank's rows and their halo plan: the distributed operator.
#[derive(Clone, Debug)]
pub struct DistMatrix {
    pub local: LocalMatrix,
    pub plan: HaloPlan,
}

impl DistMatrix {
    /// Rank `comm.rank()`'s part of the global `a` under `part` (rows and
    /// columns alike), with the plan from the distributed inspector.
    pub fn from_global<C: Comm + ?Sized>(a: &BlockCsr, part: &Partition, comm: &C) -> Result<Self, DistError> {
        let local = LocalMatrix::from_global(a, part, part, comm.rank())?;
        let plan = HaloPlan::build(&local, part, comm)?;
        Ok(Self { local, plan })
    }

    /// Scalars of an input vector: owned then ghost columns.
    pub fn input_len(&self) -> usize {
        self.local.n_local_cols() * self.local.bc
    }
    /// Scalars of an output vector: owned rows.
    pub fn output_len(&self) -> usize {
        self.local.n_rows() * self.local.br
    }

    /// `y = A x` on this rank's rows: the halo of `x` (its ghost tail,
    /// overwritten) is exchanged while the interior rows are computed from
    /// the owned part; the boundary rows follow. Collective over the
    /// neighbours; allocates nothing. Bitwise equal to the global product's
    /// rows.
    pub fn spmv<C: Comm + ?Sized>(&mut self, comm: &C, x: &mut [f64], y: &mut [f64]) {
        let local = &self.local;
        self.plan
            .exchange(comm, x, &mut |owned| local.product_rows(owned, y, false));
        local.product_rows(x, y, true);
    }
}
