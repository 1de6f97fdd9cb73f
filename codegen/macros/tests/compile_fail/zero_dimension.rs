ptap_codegen::kernels!(3x3 / 3x0 / 0x0);
fn main() {}
