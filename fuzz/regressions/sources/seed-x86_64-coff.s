    .text
    .globl leaf
leaf:
    leaq msg(%rip), %rcx
    jmp puts
    .globl main
main:
    subq $40, %rsp
    callq leaf
    addq $40, %rsp
    retq
    .section .rdata
msg: .asciz "regression seed: feature string"
