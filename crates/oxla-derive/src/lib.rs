//! `#[derive(Pytree)]`: a struct with named fields becomes a pytree node
//! whose children are its fields, in declaration order. A field marked
//! `#[pytree(static)]` is not traced: its `Debug` text goes into the
//! structure (and so into every jit cache key) and its value is kept to
//! rebuild the struct; it must be `Debug + Clone + Send + Sync + 'static`.

use proc_macro::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields, parse_macro_input};

/// Whether a field carries `#[pytree(static)]`; an error for other
/// `#[pytree(..)]` contents.
fn is_static(field: &syn::Field) -> syn::Result<bool> {
    let mut found = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("pytree")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("static") {
                found = true;
                Ok(())
            } else {
                Err(meta.error("expected `static`"))
            }
        })?;
    }
    Ok(found)
}

/// Derives `oxla::Pytree` for a struct with named fields: the struct
/// becomes a pytree node whose children are its fields, in declaration
/// order, and whose leaves are the arrays inside them (every field must be
/// a pytree itself: an `Array`, a tuple, `Vec`, `Option`, map, another
/// derived struct, ...). A field marked `#[pytree(static)]` is not traced:
/// its `Debug` text goes into the structure (and so into every jit cache
/// key, so a new value compiles again) and its value is kept to rebuild
/// the struct; it must be `Debug + Clone + Send + Sync + 'static`. Use
/// static fields for hyper-parameters (sizes, flags, names), leaves for
/// parameters. The generated code names `::oxla`, so the crate must depend
/// on `oxla`; oxla's crate documentation shows the derive at work under
/// `jit` and `grad`.
///
/// ```text
/// #[derive(oxla::Pytree, Clone, Debug)]
/// struct Layer {
///     w: oxla::Array,
///     b: Option<oxla::Array>,
///     #[pytree(static)]
///     activation: String,
/// }
/// // Layer's structure prints as `Layer(w=*, b=*, activation=static("relu"))`.
/// ```
#[proc_macro_derive(Pytree, attributes(pytree))]
pub fn derive_pytree(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<proc_macro2::TokenStream> {
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "#[derive(Pytree)] supports structs only",
        ));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(
            name,
            "#[derive(Pytree)] needs named fields",
        ));
    };
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let name_text = name.to_string();
    let count = fields.named.len();
    let mut flatten = Vec::new();
    let mut unflatten = Vec::new();
    let mut with_leaves = Vec::new();
    for (i, field) in fields.named.iter().enumerate() {
        let ident = field.ident.as_ref().expect("named field");
        let ty = &field.ty;
        let text = ident.to_string();
        if is_static(field)? {
            flatten.push(quote! { (#text, ::oxla::TreeDef::Static(::oxla::pytree::StaticValue::new(&self.#ident))) });
            unflatten.push(
                quote! { #ident: ::oxla::pytree::static_field::<#ty>(&children[#i].1, #text)? },
            );
            with_leaves.push(quote! { #ident: ::std::clone::Clone::clone(&self.#ident) });
        } else {
            flatten.push(
                quote! { (#text, <#ty as ::oxla::Pytree>::flatten_into(&self.#ident, leaves)) },
            );
            unflatten.push(quote! { #ident: <#ty as ::oxla::Pytree>::unflatten_from(&children[#i].1, leaves)? });
            with_leaves.push(
                quote! { #ident: <#ty as ::oxla::Pytree>::with_leaves(&self.#ident, leaves)? },
            );
        }
    }
    Ok(quote! {
        impl #impl_generics ::oxla::Pytree for #name #type_generics #where_clause {
            type Value = Self;

            fn into_value(self) -> ::oxla::Result<Self> {
                ::std::result::Result::Ok(self)
            }

            fn flatten_into(&self, leaves: &mut ::std::vec::Vec<::oxla::Array>) -> ::oxla::TreeDef {
                ::oxla::TreeDef::Struct(#name_text, ::std::vec![#(#flatten),*])
            }

            fn unflatten_from(
                def: &::oxla::TreeDef,
                leaves: &mut dyn ::std::iter::Iterator<Item = ::oxla::Array>,
            ) -> ::oxla::Result<Self> {
                match def {
                    ::oxla::TreeDef::Struct(name, children) if *name == #name_text && children.len() == #count => {
                        ::std::result::Result::Ok(Self { #(#unflatten),* })
                    }
                    other => ::std::result::Result::Err(::oxla::pytree::mismatch(other, #name_text)),
                }
            }

            fn with_leaves(
                &self,
                leaves: &mut dyn ::std::iter::Iterator<Item = ::oxla::Array>,
            ) -> ::oxla::Result<Self> {
                ::std::result::Result::Ok(Self { #(#with_leaves),* })
            }
        }
    })
}
