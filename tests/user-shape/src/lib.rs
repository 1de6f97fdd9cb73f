//! A four-field system with ten near-null modes: a shape set ptap does not
//! ship, declared here in one line as a user crate would.
ptap_kernels::kernels!(pub mod four_field { 4x4 / 4x10 / 10x10 });

/// The shipped kernels plus [`four_field`].
pub fn registry() -> ptap_runtime::KernelRegistry {
    ptap_runtime::KernelRegistry::shipped()
        .clone()
        .with::<four_field::Set>()
}
