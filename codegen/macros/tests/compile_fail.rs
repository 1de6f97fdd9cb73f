//! Invalid declarations are compile errors that say what is wrong.
#[test]
fn invalid_declarations_fail_to_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
