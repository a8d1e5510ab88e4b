//! `#[derive(Describe)]`: `fn describe(&self) -> &'static str` naming the type.
use proc_macro::TokenStream;

#[proc_macro_derive(Describe)]
pub fn derive_describe(input: TokenStream) -> TokenStream {
    let mut tokens = input.into_iter().map(|t| t.to_string());
    let name = tokens
        .find(|t| t == "struct" || t == "enum")
        .and_then(|_| tokens.next())
        .expect("a struct or an enum");
    format!("impl {name} {{ pub fn describe(&self) -> &'static str {{ \"{name}\" }} }}")
        .parse()
        .unwrap()
}
