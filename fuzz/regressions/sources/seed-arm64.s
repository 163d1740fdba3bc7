    .text
    .globl leaf
leaf:
    adrp x0, msg
    add x0, x0, :lo12:msg
    b puts
    .globl main
main:
    stp x29, x30, [sp, #-16]!
    bl leaf
    cbz x0, 1f
    bl leaf
1:  ldp x29, x30, [sp], #16
    ret
    .section .rodata
msg: .asciz "regression seed: feature string"
