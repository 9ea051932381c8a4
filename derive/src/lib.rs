//! `#[derive(SaliasMessage)]`: makes a `#[repr(C)]` plain-data struct a salias message.
//!
//! Plain data is zerocopy's to prove: a message type derives zerocopy's `FromBytes`,
//! `IntoBytes`, `Immutable` and `KnownLayout` next to this derive, and those check the
//! fields and padding. This derive adds what zerocopy does not say: the fingerprint
//! `connect` compares, and errors on the offending tokens, each saying what to use
//! instead, for what can never cross a process boundary (pointers, references, heap types,
//! `bool`, `char`, enums, generics, a missing `#[repr(C)]`). A type without zerocopy's
//! derives gets one error naming them. It never panics: every problem becomes a
//! `compile_error!`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, LitInt, LitStr, Type};

/// Makes a `#[repr(C)]` struct that also derives zerocopy's `FromBytes`, `IntoBytes`,
/// `Immutable` and `KnownLayout` a `salias::Message`, recording its fingerprint.
///
/// Options, in `#[salias(...)]`:
/// - `name = "Quote"`: the type name recorded in the fingerprint (default: the struct's
///   name without its module path); processes must agree on it.
/// - `version = 3`: a schema version; processes must agree on it.
/// - `crate = "path::to::salias"`: where salias is, if it is renamed.
#[proc_macro_derive(SaliasMessage, attributes(salias))]
pub fn derive_salias_message(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.into_compile_error().into(),
    }
}

struct Options {
    name: Option<String>,
    version: u32,
    krate: syn::Path,
}

fn parse_options(input: &DeriveInput) -> syn::Result<Options> {
    let mut options = Options {
        name: None,
        version: 0,
        krate: syn::parse_quote!(::salias),
    };
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("salias")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let value: LitStr = meta.value()?.parse()?;
                let name = value.value();
                if name.is_empty() || name.len() > 64 {
                    return Err(syn::Error::new(
                        value.span(),
                        "the message name must be 1 to 64 bytes long",
                    ));
                }
                options.name = Some(name);
            } else if meta.path.is_ident("version") {
                let value: LitInt = meta.value()?.parse()?;
                options.version = value.base10_parse()?;
            } else if meta.path.is_ident("pod") {
                return Err(meta.error(
                    "the `pod` option is gone: salias messages are checked by zerocopy now; remove `pod` and derive `zerocopy::FromBytes, zerocopy::IntoBytes, zerocopy::Immutable, zerocopy::KnownLayout` (bytemuck's `Pod` is not used)",
                ));
            } else if meta.path.is_ident("crate") {
                let value: LitStr = meta.value()?.parse()?;
                options.krate = value.parse()?;
            } else {
                return Err(meta.error(
                    "unknown salias option; expected `name = \"...\"`, `version = N` or `crate = \"...\"`",
                ));
            }
            Ok(())
        })?;
    }
    Ok(options)
}

fn check_repr(input: &DeriveInput) -> syn::Result<()> {
    let mut has_c = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") || meta.path.is_ident("transparent") {
                has_c = true;
            }
            // `align(N)` and `packed` keep a defined layout; allow them alongside `C`.
            if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
        })?;
    }
    if has_c {
        Ok(())
    } else {
        Err(syn::Error::new(
            input.ident.span(),
            format!(
                "`{}` needs `#[repr(C)]`: a salias message's field layout must be the same in every process",
                input.ident
            ),
        ))
    }
}

/// Field types that can never cross a process boundary, with the reason.
fn forbidden(ty: &Type) -> Option<(Span, String)> {
    match ty {
        Type::Reference(r) => Some((r.span(), "references point into this process's memory and mean nothing in another process; store the value itself or an index".into())),
        Type::Ptr(p) => Some((p.span(), "raw pointers point into this process's memory and mean nothing in another process; store an offset or index instead".into())),
        Type::Array(a) => forbidden(&a.elem),
        Type::Paren(p) => forbidden(&p.elem),
        Type::Group(g) => forbidden(&g.elem),
        Type::Tuple(t) if !t.elems.is_empty() => Some((t.span(), "tuples have no guaranteed layout; use a `#[repr(C)]` struct".into())),
        Type::Slice(s) => Some((s.span(), "slices are unsized; use a fixed-size array `[T; N]`".into())),
        Type::TraitObject(t) => Some((t.span(), "trait objects cannot cross processes".into())),
        Type::Path(path) => {
            let last = path.path.segments.last()?;
            let name = last.ident.to_string();
            let reason = match name.as_str() {
                "String" | "str" => "`String` owns heap memory of this process; use a fixed-size byte array such as `[u8; 32]`",
                "Vec" | "VecDeque" => "`Vec` owns heap memory of this process; use a fixed-size array `[T; N]` plus a length field",
                "Box" | "Rc" | "Arc" | "Cow" => "smart pointers point into this process's memory; store the value itself",
                "HashMap" | "BTreeMap" | "HashSet" | "BTreeSet" => "collections own heap memory of this process; use fixed-size arrays",
                "bool" => "`bool` is invalid for every byte but 0 and 1, so a peer could hand you an invalid value; use `u8` (0 or 1)",
                "char" => "`char` is invalid for most bit patterns; use `u32` and convert with `char::from_u32`",
                "Option" => "`Option` has no stable layout for most types; use a flag field and a value",
                "NonNull" | "NonZeroU8" | "NonZeroU16" | "NonZeroU32" | "NonZeroU64" | "NonZeroUsize" => {
                    "this type is invalid for the all-zero bit pattern; use the plain integer or pointer-free value"
                }
                _ => return None,
            };
            Some((last.ident.span(), reason.into()))
        }
        _ => None,
    }
}

/// The field type as recorded in the fingerprint: tokens without whitespace, with leading
/// paths dropped from simple paths so `core::primitive::u64` and `u64` agree.
fn type_label(ty: &Type) -> String {
    let tokens = match ty {
        Type::Path(path) if path.qself.is_none() => match path.path.segments.last() {
            Some(last) => last.to_token_stream().to_string(),
            None => ty.to_token_stream().to_string(),
        },
        _ => ty.to_token_stream().to_string(),
    };
    tokens.chars().filter(|c| !c.is_whitespace()).collect()
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let options = parse_options(input)?;
    let ident = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "salias messages cannot be generic: every process must agree on one concrete layout; use a concrete type",
        ));
    }
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => named.named.iter().collect::<Vec<_>>(),
            Fields::Unnamed(unnamed) => unnamed.unnamed.iter().collect(),
            Fields::Unit => Vec::new(),
        },
        Data::Enum(data) => {
            return Err(syn::Error::new(
                data.enum_token.span(),
                "enums cannot be salias messages: a peer could send a discriminant that is not a variant; use a struct with an integer tag",
            ));
        }
        Data::Union(data) => {
            return Err(syn::Error::new(
                data.union_token.span(),
                "unions cannot be salias messages; use a struct with a byte array",
            ));
        }
    };
    check_repr(input)?;

    let mut errors: Option<syn::Error> = None;
    for field in &fields {
        if let Some((span, reason)) = forbidden(&field.ty) {
            let error = syn::Error::new(span, format!("this field cannot be part of a salias message: {reason}"));
            match &mut errors {
                Some(all) => all.combine(error),
                None => errors = Some(error),
            }
        }
    }
    if let Some(errors) = errors {
        return Err(errors);
    }

    let krate = &options.krate;
    let private = quote!(#krate::__private);
    let type_name = options.name.clone().unwrap_or_else(|| ident.to_string());
    let version = options.version;

    let members: Vec<TokenStream2> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| match &f.ident {
            Some(name) => quote!(#name),
            None => {
                let index = syn::Index::from(i);
                quote!(#index)
            }
        })
        .collect();
    let field_names: Vec<String> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| f.ident.as_ref().map_or_else(|| i.to_string(), |n| n.to_string()))
        .collect();
    let types: Vec<&Type> = fields.iter().map(|f| &f.ty).collect();
    let labels: Vec<String> = types.iter().map(|t| type_label(t)).collect();

    // Spanned at the type's name: a type without zerocopy's derives gets one error there.
    let plain_data = quote_spanned! {ident.span()=> #private::assert_plain_data::<#ident>() };

    Ok(quote! {
        const _: () = {
            #[allow(clippy::all)]
            const _: () = #plain_data;

            // `Message` follows from this and zerocopy's traits (`salias::Message`).
            impl #private::DerivedMessage for #ident {
                const FIELDS: &'static [#private::FieldLayout] = &[
                    #(
                        #private::FieldLayout {
                            name: #field_names,
                            ty: #labels,
                            offset: ::core::mem::offset_of!(#ident, #members),
                            size: ::core::mem::size_of::<#types>(),
                        },
                    )*
                ];
                const FINGERPRINT: #private::Fingerprint = #private::Fingerprint::of_fields(
                    #type_name,
                    ::core::mem::size_of::<#ident>(),
                    ::core::mem::align_of::<#ident>(),
                    <Self as #private::DerivedMessage>::FIELDS,
                    #version,
                );
            }
        };
    })
}
