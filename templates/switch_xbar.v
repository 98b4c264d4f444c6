// {{ module }}_xbar: the crossbar's data path. Output VC o carries the flit of input VC
// sel[o] (binary), or zero when no input VC has that index. The input VCs are taken four at
// a time, and each group's 4:1 multiplexer is two 4-input LUTs a bit: the first passes the
// low select bit through when the high one is set, and otherwise picks between VCs 0 and 1;
// the second picks VC 2 or 3 by that bit, or keeps the first's. An AND-OR of one-hot selects
// needs three LUT4 a bit at four input VCs, and the mapper (abc9) does not find the two-LUT
// form by itself, so the stages are modules that synthesis keeps (keep_hierarchy; the
// standard-cell flow flattens them). Larger switches pick among the groups' results by the
// select's upper bits, in this wrapper, which synthesis flattens into the switch (yosys
// 0.23's `stat -json` breaks on kept modules nested in kept modules). Simulators run the
// same selection as one always block (`ifdef SYNTHESIS, which yosys defines; the stage
// modules exist only for synthesis).
/* verilator lint_off DECLFILENAME */
module {{ module }}_xbar #(
    parameter integer NV = 2,
    parameter integer NO = 2,
    parameter integer W = 1,
    parameter integer SW = 1
) (
    input  wire [NO*SW-1:0] sel,
    input  wire [NV*W-1:0]  in,
`ifdef SYNTHESIS
    output wire [NO*W-1:0]  out
`else
    output reg  [NO*W-1:0]  out
`endif
);
`ifdef SYNTHESIS
    localparam integer G = (NV + 3) / 4;    // groups of four input VCs
    wire [NO*G*W-1:0] first, group;
    {{ module }}_xbar_first #(.NV(NV), .NO(NO), .W(W), .SW(SW), .G(G)) first_stage (
        .sel(sel), .in(in), .out(first));
    {{ module }}_xbar_second #(.NV(NV), .NO(NO), .W(W), .SW(SW), .G(G)) second_stage (
        .sel(sel), .first(first), .in(in), .out(group));
    genvar o;
    generate
        for (o = 0; o < NO; o = o + 1) begin : pick
            if (G == 1 && SW <= 2) begin : one
                // (every index is in the one group)
                assign out[o*W +: W] = group[o*W +: W];
            end else begin : many
                // the group by the select's upper bits (none beyond the last: zero)
                wire [31:0] g = {{ '{' }}{(32-SW){1'b0}}, sel[o*SW +: SW]} / 4;
                assign out[o*W +: W] = g < G ? group[(o*G + (g < G ? g : 0))*W +: W] : {W{1'b0}};
            end
        end
    endgenerate
`else
    // Simulators run the same selection as one block (the stages below, chained, would
    // let a change ripple through them in several steps, each waking the next switch's
    // blocks). yosys defines SYNTHESIS; a test proves the two forms equivalent.
    always @* begin : mux
        integer o, k;
        for (o = 0; o < NO; o = o + 1) begin
            k = {{ '{' }}{(32-SW){1'b0}}, sel[o*SW +: SW]};
            // (an index beyond NV selects zero, as the stages do)
            out[o*W +: W] = k < NV ? in[(k < NV ? k : 0)*W +: W] : {W{1'b0}};
        end
    end
`endif
endmodule

`ifdef SYNTHESIS
/* verilator lint_off UNUSEDSIGNAL */
// The first stage, per output VC and group, bitwise: the low select bit when the high one is
// set, else input VC 4g + 1 or 4g by the low bit.
(* keep_hierarchy *)
module {{ module }}_xbar_first #(
    parameter integer NV = 2,
    parameter integer NO = 2,
    parameter integer W = 1,
    parameter integer SW = 1,
    parameter integer G = 1
) (
    input  wire [NO*SW-1:0] sel,
    input  wire [NV*W-1:0]  in,
    output wire [NO*G*W-1:0] out
);
    // the input VCs, zero beyond NV (one spare bit keeps the replication count positive)
    wire [4*G*W:0] padded = {{ '{' }}{((4*G - NV)*W + 1){1'b0}}, in};
    wire [4*G*W-1:0] x = padded[4*G*W-1:0];
    genvar o, g;
    generate
        for (o = 0; o < NO; o = o + 1) begin : ov
            wire s0 = sel[o*SW];
            wire s1 = SW > 1 ? sel[o*SW + (SW > 1 ? 1 : 0)] : 1'b0;
            for (g = 0; g < G; g = g + 1) begin : group
                assign out[(o*G + g)*W +: W] = s1 ? {W{s0}} : s0 ? x[(4*g + 1)*W +: W] : x[4*g*W +: W];
            end
        end
    endgenerate
endmodule

// The second stage, bitwise: input VC 4g + 3 where the first stage's bit is set and 4g + 2
// where it is clear when the high select bit is set, else the first stage's bits.
(* keep_hierarchy *)
module {{ module }}_xbar_second #(
    parameter integer NV = 2,
    parameter integer NO = 2,
    parameter integer W = 1,
    parameter integer SW = 1,
    parameter integer G = 1
) (
    input  wire [NO*SW-1:0]  sel,
    input  wire [NO*G*W-1:0] first,
    input  wire [NV*W-1:0]   in,
    output wire [NO*G*W-1:0] out
);
    wire [4*G*W:0] padded = {{ '{' }}{((4*G - NV)*W + 1){1'b0}}, in};
    wire [4*G*W-1:0] x = padded[4*G*W-1:0];
    genvar o, g;
    generate
        for (o = 0; o < NO; o = o + 1) begin : ov
            wire s1 = SW > 1 ? sel[o*SW + (SW > 1 ? 1 : 0)] : 1'b0;
            for (g = 0; g < G; g = g + 1) begin : group
                wire [W-1:0] f = first[(o*G + g)*W +: W];
                assign out[(o*G + g)*W +: W] = s1 ? (f & x[(4*g + 3)*W +: W]) | (~f & x[(4*g + 2)*W +: W]) : f;
            end
        end
    endgenerate
endmodule
/* verilator lint_on UNUSEDSIGNAL */
`endif
/* verilator lint_on DECLFILENAME */