ptap_codegen::kernels!(3x3 / 3x6);
fn main() {}
