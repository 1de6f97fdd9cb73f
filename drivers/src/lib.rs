//! The drivers users call, as library code (the `ptap` binary only parses
//! arguments and prints): the time-stepping loop on the beam
//! ([`time_loop::run_beam`]) on the CPU or a GPU, with the schedule cache, the
//! one-shot beam solve ([`solve::run`]), the prolongator-filter sweep
//! ([`sweep::run`]), the hierarchy beside the paper's `tab:hier`
//! ([`hier::run`], mesh setup only), schedule files ([`schedules::inspect`] writes one,
//! [`schedules::replay`] runs its numeric products), the bench harness
//! ([`bench::run`] on the CPU, [`bench_cuda::run`] on a GPU), SVG charts of
//! the bench and time-loop reports ([`plot`]), and users' own operators from
//! files through the front door crate `ptap` ([`user::solve`], and
//! [`user::run_sequence`] over operators of one pattern, with the schedule
//! cache of [`cache`]).
//!
//! This crate sits at the top of the house: it knows the problem (`ptap-fem`,
//! with its device assembly) and the backends (`ptap-runtime`'s CPU,
//! `ptap-cuda`), which know nothing of it.
pub mod bench;
pub mod bench_cuda;
pub mod cache;
pub mod hier;
pub mod plot;
pub mod schedules;
pub mod solve;
pub mod sweep;
pub mod target;
pub mod time_loop;
pub mod user;
