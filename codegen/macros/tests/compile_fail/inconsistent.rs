ptap_codegen::kernels!(3x3 / 4x6 / 6x6);
fn main() {}
