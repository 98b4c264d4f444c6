    // Body flit j of the worm with id `id`: bit b is id[b mod I] ^ j[b mod 16] ^ PATTERN[b mod 16]
    // (I the header's id field; the model's body flits, docs/interpretations.md 'Body flits').
    function [W-1:0] body(input [{{ idw_eff }}-1:0] id, input [SW-1:0] j);
        integer b;
        reg [15:0] j16;
        begin
            j16 = { {(16-SW){1'b0}}, j };
            for (b = 0; b < W; b = b + 1)
                body[b] = {% if idw > 0 %}id[b % {{ idw }}] ^ {% endif %}j16[b % 16] ^ PATTERN[b % 16];
        end
    endfunction
