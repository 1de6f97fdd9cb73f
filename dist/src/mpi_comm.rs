//! [`Comm`] over MPI (rsmpi, the system's MPI library; feature `mpi`).
//!
//! The halo goes by nonblocking point-to-point messages (`MPI_Irecv` into the
//! ghost tail, `MPI_Isend` from the plan's send buffer) posted before the
//! overlapped work and waited after it. The requests live on the stack of a
//! short recursion (one frame per link), so an exchange allocates nothing.
//! Reductions are `MPI_Allgather` of the partial values into a scratch buffer
//! held here, then a sum in rank order on every rank ([`Comm`]'s contract).
//!
//! Only the thread that created the communicator calls MPI (the overlapped
//! work may run on rayon's threads, which never do), so
//! [`initialize`] asks for `MPI_THREAD_FUNNELED`.
use crate::comm::{sum_in_rank_order, Comm, Link, MAX_REDUCE};
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::request::LocalScope;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use std::cell::RefCell;

/// The tag of halo messages.
const HALO_TAG: i32 = 0x7074;

/// Initializes MPI (`MPI_THREAD_FUNNELED`); `None` if it was already
/// initialized. MPI is finalized when the [`Universe`] is dropped.
pub fn initialize() -> Option<Universe> {
    let (universe, _threading) = mpi::initialize_with_threading(Threading::Funneled)?;
    Some(universe)
}

/// A communicator (the world, usually) with the scratch its reductions use.
pub struct MpiComm {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    gathered: RefCell<Vec<f64>>,
}

impl MpiComm {
    /// `MPI_COMM_WORLD` of an initialized `universe`.
    pub fn world(universe: &Universe) -> Self {
        Self::new(universe.world())
    }

    pub fn new(world: SimpleCommunicator) -> Self {
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        Self {
            world,
            rank,
            size,
            gathered: RefCell::new(vec![0.0; size * MAX_REDUCE]),
        }
    }

    pub fn communicator(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// Posts the receives `recvs` (tiling `recv` in order), then the sends,
    /// then runs `overlap`, then waits for everything, innermost first.
    fn post_receives<'a>(
        &self,
        scope: &LocalScope<'a>,
        recvs: &[Link],
        recv: &'a mut [f64],
        sends: &[Link],
        send: &'a [f64],
        overlap: &mut dyn FnMut(),
    ) {
        match recvs.split_first() {
            None => self.post_sends(scope, sends, send, overlap),
            Some((l, rest)) => {
                let (mine, others) = recv.split_at_mut(l.len);
                let req = self
                    .world
                    .process_at_rank(l.rank as i32)
                    .immediate_receive_into_with_tag(scope, mine, HALO_TAG);
                self.post_receives(scope, rest, others, sends, send, overlap);
                req.wait();
            }
        }
    }

    fn post_sends<'a>(&self, scope: &LocalScope<'a>, sends: &[Link], send: &'a [f64], overlap: &mut dyn FnMut()) {
        match sends.split_first() {
            None => overlap(),
            Some((l, rest)) => {
                let req = self.world.process_at_rank(l.rank as i32).immediate_send_with_tag(
                    scope,
                    &send[l.start..l.start + l.len],
                    HALO_TAG,
                );
                self.post_sends(scope, rest, send, overlap);
                req.wait();
            }
        }
    }
}

fn counts_and_displacements(counts: &[usize]) -> (Vec<i32>, Vec<i32>) {
    let c: Vec<i32> = counts
        .iter()
        .map(|&n| i32::try_from(n).expect("an MPI message of fewer than 2^31 entries"))
        .collect();
    let mut d = Vec::with_capacity(c.len());
    let mut at = 0i32;
    for &n in &c {
        d.push(at);
        at = at.checked_add(n).expect("an MPI buffer of fewer than 2^31 entries");
    }
    (c, d)
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }

    fn exchange(&self, sends: &[Link], send: &[f64], recvs: &[Link], recv: &mut [f64], overlap: &mut dyn FnMut()) {
        let mut at = 0;
        for l in recvs {
            assert_eq!(l.start, at, "receive links must tile the ghost buffer in order");
            at += l.len;
        }
        assert_eq!(at, recv.len(), "receive links must tile the ghost buffer");
        mpi::request::scope(|scope| {
            self.post_receives(scope, recvs, recv, sends, send, overlap);
        });
    }

    fn all_reduce_sum(&self, values: &mut [f64]) {
        let m = values.len();
        if m == 0 {
            return;
        }
        let mut scratch = self.gathered.borrow_mut();
        if scratch.len() < self.size * m {
            scratch.resize(self.size * m, 0.0);
        }
        let parts = &mut scratch[..self.size * m];
        self.world.all_gather_into(&*values, parts);
        sum_in_rank_order(parts, values);
    }

    fn broadcast(&self, root: usize, values: &mut [f64]) {
        self.world.process_at_rank(root as i32).broadcast_into(values);
    }

    fn gather(&self, root: usize, local: &[f64]) -> Option<Vec<f64>> {
        let root_process = self.world.process_at_rank(root as i32);
        let n = local.len() as u64;
        if self.rank == root {
            let mut lens = vec![0u64; self.size];
            root_process.gather_into_root(&n, &mut lens[..]);
            let lens: Vec<usize> = lens.iter().map(|&l| l as usize).collect();
            let (counts, displs) = counts_and_displacements(&lens);
            let mut all = vec![0.0; lens.iter().sum()];
            let mut part = PartitionMut::new(&mut all[..], counts, displs);
            root_process.gather_varcount_into_root(local, &mut part);
            Some(all)
        } else {
            root_process.gather_into(&n);
            root_process.gather_varcount_into(local);
            None
        }
    }

    fn all_to_all_u64(&self, send: &[Vec<u64>]) -> Vec<Vec<u64>> {
        assert_eq!(send.len(), self.size, "one list per rank");
        let out_lens: Vec<u64> = send.iter().map(|v| v.len() as u64).collect();
        let mut in_lens = vec![0u64; self.size];
        self.world.all_to_all_into(&out_lens[..], &mut in_lens[..]);
        let flat: Vec<u64> = send.concat();
        let out: Vec<usize> = out_lens.iter().map(|&l| l as usize).collect();
        let inc: Vec<usize> = in_lens.iter().map(|&l| l as usize).collect();
        let (sc, sd) = counts_and_displacements(&out);
        let (rc, rd) = counts_and_displacements(&inc);
        let mut recv = vec![0u64; inc.iter().sum()];
        {
            let sbuf = Partition::new(&flat[..], sc, &sd[..]);
            let mut rbuf = PartitionMut::new(&mut recv[..], rc, &rd[..]);
            self.world.all_to_all_varcount_into(&sbuf, &mut rbuf);
        }
        let mut result = Vec::with_capacity(self.size);
        let mut at = 0;
        for &l in &inc {
            result.push(recv[at..at + l].to_vec());
            at += l;
        }
        result
    }
}

/// Writes `line` and a newline to stderr in one write. Standard error is
/// unbuffered, so `eprintln!` writes its formatted pieces one by one, and
/// `mpirun`, which forwards each rank's writes as they arrive, can then
/// interleave two ranks' messages inside a line.
pub fn eprint_line(line: &str) {
    use std::io::Write;
    let mut s = String::with_capacity(line.len() + 1);
    s.push_str(line);
    s.push('\n');
    // Nothing better to do if stderr itself fails.
    let _ = std::io::stderr().lock().write_all(s.as_bytes());
}
