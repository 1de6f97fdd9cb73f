ptap_codegen::kernels!(pub mod big { 17x17 / 17x20 / 20x20 });
fn main() {}
