//! Generates bindings for the few libibumad calls the tool makes, from the installed header
//! (`libibumad-dev`), so the struct layout of `umad_port_t` is the library's own.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-lib=ibumad");
    let bindings = bindgen::Builder::default()
        .header_contents("umad_wrapper.h", "#include <infiniband/umad.h>\n")
        .allowlist_function(
            "umad_(init|get_port|release_port|open_port|close_port|get_mad|size|status|set_addr|send|recv|register)",
        )
        .allowlist_type("umad_port_t")
        .generate_comments(false)
        .layout_tests(true)
        .generate()
        .expect("bindgen over <infiniband/umad.h> (are libibumad-dev and libclang-dev installed?)");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR set by cargo"));
    bindings
        .write_to_file(out.join("umad.rs"))
        .expect("write umad.rs");
}
