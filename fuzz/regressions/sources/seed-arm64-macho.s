    .section __TEXT,__text
    .globl _leaf
_leaf:
    adrp x0, msg@PAGE
    add x0, x0, msg@PAGEOFF
    ret
    .globl _main
_main:
    stp x29, x30, [sp, #-16]!
    bl _leaf
    ldp x29, x30, [sp], #16
    ret
    .section __TEXT,__cstring
msg: .asciz "regression seed: feature string"
