//! The engine's core type names (`int4`, `uint8`, `xunknown8`, `float4`),
//! which no C compiler knows, as standard C. Applied to type tokens as the
//! engine prints them, never to text, so a variable that happens to be
//! called `int4` keeps its name.

use std::borrow::Cow;

/// The standard spelling of one core type name; other names unchanged.
pub fn standard(name: &str) -> Cow<'_, str> {
    let mapped = match name {
        "int1" => "int8_t",
        "int2" => "int16_t",
        "int4" => "int32_t",
        "int8" => "int64_t",
        "int16" => "__int128",
        "uint1" | "xunknown1" | "byte" => "uint8_t",
        "uint2" | "xunknown2" => "uint16_t",
        "uint4" | "xunknown4" => "uint32_t",
        "uint8" | "xunknown8" => "uint64_t",
        "uint16" | "xunknown16" => "unsigned __int128",
        "float4" => "float",
        "float8" => "double",
        "float10" | "float16" => "long double",
        "wchar2" | "wchar16" => "char16_t",
        "wchar4" | "wchar32" => "char32_t",
        "undefined" => "uint8_t",
        _ => return Cow::Borrowed(name),
    };
    Cow::Borrowed(mapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_names_become_standard_ones() {
        assert_eq!(standard("int4"), "int32_t");
        assert_eq!(standard("xunknown8"), "uint64_t");
        assert_eq!(standard("float8"), "double");
        assert_eq!(standard("char"), "char");
        assert_eq!(standard("node"), "node");
    }
}
