//! Solve a user's block system from files, then refresh with more operators
//! of the same pattern, as a time-stepping code would.
//!
//! Run (the example operator ships under `examples/data/`):
//! `cargo run --release -p ptap --example solve_files -- A.petsc b.petsc coords.mtx [A_next ...]`
//!
//! `A` is Matrix Market or PETSc binary (detected by content; the block size
//! from the file or inferred), `b` any vector file, `coords` the nodal
//! coordinates (one row per block row of `A`): rigid-body modes are built from
//! them. Every further `A_next` must have `A`'s pattern: it is refreshed
//! (numeric products only) and solved with the same `b`.
use ptap::{io, NearNull, Solver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        return Err("usage: solve_files A b coords [A_next ...]".into());
    }
    let a = io::read_matrix(&args[0], io::BlockSpec::Infer)?;
    let b = io::read_vector(&args[1])?;
    let (nodes, dim, coords) = io::read_coordinates(&args[2])?;
    println!(
        "{}: {} rows, {}x{} blocks, {nodes} nodes in {dim}D",
        args[0],
        a.scalar_rows(),
        a.block_shape().0,
        a.block_shape().1
    );
    let mut solver = Solver::builder(a)
        .near_null(NearNull::Coordinates { coords, dim })
        .build_with_progress(&mut |line| eprintln!("  {line}"))?;
    let info = solver.info();
    println!(
        "{} levels, operator complexity {:.3}, on {}",
        info.levels.len(),
        info.operator_complexity,
        info.device
    );
    let (x, rep) = solver.solve_new(&b)?;
    println!(
        "solved in {} iterations, relative residual {:.2e}, max |x| = {:.6e}",
        rep.iterations,
        rep.relative_residual,
        x.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    );
    for path in &args[3..] {
        let next = io::read_matrix(path, io::BlockSpec::Infer)?;
        let setup_s = solver.refresh_matrix(&next)?;
        let (_, rep) = solver.solve_new(&b)?;
        println!(
            "{path}: matrix setup {:.3} s, {} iterations, {:.3} s",
            setup_s, rep.iterations, rep.solve_s
        );
    }
    Ok(())
}
