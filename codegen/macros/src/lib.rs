//! `kernels!`: declare a block-shape set in one line.
//!
//! ```ignore
//! ptap_kernels::kernels!(4x4 / 4x10 / 10x10);                  // mod kernels_4x4_4x10_10x10
//! ptap_kernels::kernels!(pub mod four_field { 4x4 / 4x10 / 10x10 });
//! ```
//!
//! The three blocks are the fine operator `bf x bf`, the prolongator `bf x bc`
//! and the coarse operator `bc x bc`. The expansion is a module holding
//! `BlockRxC` and `ProductBFxBC` types (unrolled CPU kernels implementing
//! `ptap_kernels`' traits), a `Set` type to register with the runtime, the CUDA
//! source `CUDA_SOURCE` the device backend launches for the set's shapes and
//! its typed launchers `launch::Functions`. The crate
//! using it depends on `ptap-kernels`. An invalid declaration (zero or too
//! large a dimension, inconsistent blocks) is a compile error naming the block.
//! All the generation lives in `ptap-codegen-core`; this crate only parses.
use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2, TokenTree};
use ptap_codegen_core::{ShapeError, ShapeSet};
use quote::{format_ident, quote};
use std::str::FromStr;
use syn::parse::{Parse, ParseStream};
use syn::{braced, Ident, Token, Visibility};

/// The declaration's blocks as written, each with the span of its first token.
struct Declaration {
    vis: Visibility,
    name: Option<Ident>,
    blocks: Vec<(String, Span)>,
    span: Span,
}

fn blocks_of(tokens: TokenStream2) -> Vec<(String, Span)> {
    let mut blocks: Vec<(String, Span)> = vec![(String::new(), Span::call_site())];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == '/' => blocks.push((String::new(), Span::call_site())),
            _ => {
                let last = blocks.last_mut().expect("one block at least");
                if last.0.is_empty() {
                    last.1 = tt.span();
                }
                last.0.push_str(&tt.to_string());
            }
        }
    }
    blocks
}

impl Parse for Declaration {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let span = input.span();
        if input.peek(Token![mod]) || input.peek(Token![pub]) {
            let vis: Visibility = input.parse()?;
            input.parse::<Token![mod]>()?;
            let name: Ident = input.parse()?;
            let content;
            braced!(content in input);
            let blocks = blocks_of(content.parse()?);
            return Ok(Declaration {
                vis,
                name: Some(name),
                blocks,
                span,
            });
        }
        let blocks = blocks_of(input.parse()?);
        Ok(Declaration {
            vis: syn::parse_quote!(pub),
            name: None,
            blocks,
            span,
        })
    }
}

impl Declaration {
    /// The span of the block an error is about, else the whole declaration.
    fn span_of(&self, e: &ShapeError) -> Span {
        let block = match e {
            ShapeError::ZeroDimension { block }
            | ShapeError::TooLarge { block, .. }
            | ShapeError::FineNotSquare { block }
            | ShapeError::ProlongatorRows { block, .. }
            | ShapeError::CoarseShape { block, .. } => block,
            ShapeError::Syntax { .. } => return self.span,
        };
        self.blocks
            .iter()
            .find(|(text, _)| text == block)
            .map_or(self.span, |(_, s)| *s)
    }
}

/// Expands a block-shape declaration `F x F / F x C / C x C` into a module of
/// generated kernels; see the crate docs.
#[proc_macro]
pub fn kernels(input: TokenStream) -> TokenStream {
    let decl = syn::parse_macro_input!(input as Declaration);
    let text: Vec<&str> = decl.blocks.iter().map(|(t, _)| t.as_str()).collect();
    let set = match ShapeSet::parse(&text.join(" / ")) {
        Ok(s) => s,
        Err(e) => {
            return syn::Error::new(decl.span_of(&e), format!("ptap kernels!: {e}"))
                .to_compile_error()
                .into()
        }
    };
    let name = decl
        .name
        .clone()
        .unwrap_or_else(|| format_ident!("kernels_{}", set.stem()));
    let body = TokenStream2::from_str(&ptap_codegen_core::rust::module_body(&set))
        .expect("the generator emits valid Rust tokens");
    let vis = &decl.vis;
    let doc = format!("Kernels generated for the block shapes `{}`.", set.declaration());
    quote! {
        #[doc = #doc]
        // `c = c + x0 y0 + x1 y1` spells the accumulation order on purpose.
        #[allow(clippy::assign_op_pattern)]
        #vis mod #name {
            #body
        }
    }
    .into()
}

/// Expands to the items of the shape-free CUDA module (vector kernels, fill,
/// coarse Cholesky): `CUDA_MODULE`, `CUDA_SOURCE`, `CUDA_ENTRIES` and
/// `launch::Functions`. `ptap-kernels` ships them once, as `ptap_kernels::common`.
#[proc_macro]
pub fn common_kernels(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return syn::Error::new(Span::call_site(), "ptap common_kernels!: takes no arguments")
            .to_compile_error()
            .into();
    }
    TokenStream::from_str(&ptap_codegen_core::rust::common_body()).expect("the generator emits valid Rust tokens")
}
