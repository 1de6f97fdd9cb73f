//! What the distributed executors ask of the ranks: a neighbour exchange,
//! a small deterministic all-reduce, broadcast, gather, and (setup only) an
//! all-to-all of index lists.
//!
//! [`SingleRank`] is the one-process implementation (no ghosts, reductions
//! are the identity) the unit tests and a no-MPI build use; `MpiComm`
//! (feature `mpi`, module `mpi_comm`) is the real one. There is no
//! in-process multi-rank engine: multi-rank behaviour is tested under
//! `mpirun` only.

/// One message of a neighbour exchange: `len` scalars at `start` of the send
/// (or receive) buffer, to (or from) `rank`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub rank: usize,
    pub start: usize,
    pub len: usize,
}

/// The communication the distributed executors use. Every collective is
/// called by every rank in the same order.
///
/// Reductions are deterministic and give the same bits on every rank (CG's
/// branches depend on them, and ranks that disagreed would deadlock): the
/// per-rank partial values are summed in rank order.
pub trait Comm {
    /// This process's rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;

    /// Neighbour exchange: sends `send[l.start..l.start + l.len]` to `l.rank`
    /// for every `l` in `sends`, receives `recv[l.start..l.start + l.len]`
    /// from `l.rank` for every `l` in `recvs` (the receive links tile `recv`
    /// in order), and runs `overlap` while the messages are in flight. Returns
    /// when every message has completed. Allocates nothing.
    fn exchange(&self, sends: &[Link], send: &[f64], recvs: &[Link], recv: &mut [f64], overlap: &mut dyn FnMut());

    /// `values[j] = sum over ranks r of values_r[j]`, summed in rank order
    /// (`((v_0 + v_1) + v_2) + ...`), identical on every rank. For a few
    /// scalars (CG's dots); allocates nothing up to [`MAX_REDUCE`] values.
    fn all_reduce_sum(&self, values: &mut [f64]);

    /// `values` from rank `root` on every rank (lengths equal everywhere).
    fn broadcast(&self, root: usize, values: &mut [f64]);

    /// The ranks' `local` slices concatenated in rank order, on `root`
    /// (`None` elsewhere). Lengths may differ per rank. Setup/report time:
    /// it allocates.
    fn gather(&self, root: usize, local: &[f64]) -> Option<Vec<f64>>;

    /// Setup-time all-to-all of index lists: `send[q]` goes to rank `q`; the
    /// result's entry `q` is what rank `q` sent here (`send.len() == size()`).
    fn all_to_all_u64(&self, send: &[Vec<u64>]) -> Vec<Vec<u64>>;
}

/// The most values [`Comm::all_reduce_sum`] reduces without allocating.
pub const MAX_REDUCE: usize = 8;

/// One rank and no neighbours: the exchange only runs the overlapped work,
/// reductions and broadcasts leave the values as they are.
#[derive(Clone, Copy, Debug, Default)]
pub struct SingleRank;

impl Comm for SingleRank {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn exchange(&self, sends: &[Link], _send: &[f64], recvs: &[Link], _recv: &mut [f64], overlap: &mut dyn FnMut()) {
        assert!(
            sends.is_empty() && recvs.is_empty(),
            "a single rank has no neighbours to exchange with"
        );
        overlap();
    }
    fn all_reduce_sum(&self, _values: &mut [f64]) {}
    fn broadcast(&self, root: usize, _values: &mut [f64]) {
        assert_eq!(root, 0, "a single rank broadcasts from rank 0");
    }
    fn gather(&self, root: usize, local: &[f64]) -> Option<Vec<f64>> {
        assert_eq!(root, 0, "a single rank gathers on rank 0");
        Some(local.to_vec())
    }
    fn all_to_all_u64(&self, send: &[Vec<u64>]) -> Vec<Vec<u64>> {
        assert_eq!(send.len(), 1, "one list per rank");
        send.to_vec()
    }
}

/// Sums `parts` (`ranks x m`, row-major) over ranks in rank order into `out`
/// (`m`): the reduction both communicators share.
pub fn sum_in_rank_order(parts: &[f64], out: &mut [f64]) {
    let m = out.len();
    debug_assert!(m > 0 && parts.len() % m == 0);
    out.copy_from_slice(&parts[..m]);
    for row in parts.chunks_exact(m).skip(1) {
        for (o, v) in out.iter_mut().zip(row) {
            *o += v;
        }
    }
}

/// Makes a rank-local outcome collective: every rank learns whether any rank
/// failed, so all of them return an error together instead of some waiting
/// in a collective the failed ones never enter. Collective (one all-reduce).
pub fn agree<T, C: Comm + ?Sized>(comm: &C, r: Result<T, crate::DistError>) -> Result<T, crate::DistError> {
    let mut failed = [f64::from(u8::from(r.is_err()))];
    comm.all_reduce_sum(&mut failed);
    match r {
        Err(e) => Err(e),
        Ok(_) if failed[0] > 0.0 => Err(crate::DistError::Elsewhere {
            ranks: failed[0] as usize,
        }),
        Ok(v) => Ok(v),
    }
}
