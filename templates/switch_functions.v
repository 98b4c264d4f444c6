    // ---- helpers: loops over bits with constant indices; no loop variable reaches the datapath ----
    function integer zx_cw(input [CW-1:0] v); zx_cw = { {(32-CW){1'b0}}, v }; endfunction
    function integer next_slot(input integer s); next_slot = s + 1 < D ? s + 1 : s; endfunction
{%- if !eject %}
{%- if node %}
    // The direction a header takes{% if per_port %} from input VC i{% endif %}: the route table (a ROM) at the key
    // its header names ({{ key_doc }}).
    /* verilator lint_off UNUSEDSIGNAL */
    function [DW-1:0] route_of(input [W-1:0] flit{% if per_port %}, input integer i{% endif %});
        route_of = ROUTES[({{ route_index }})*DW +: DW];
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */
{%- endif %}
    // Whether the header `flit`, at input VC i, asks for direction c ({% if node %}its route
    // table entry{% else if radix == 2 %}its routing bit{% else %}its routing digit{% endif %}).
    /* verilator lint_off UNUSEDSIGNAL */
    function wants(input [W-1:0] flit, input integer i, input integer c);
{%- if node %}
        wants = route_of(flit{% if per_port %}, i{% endif %}) == c[DW-1:0];
{%- else if radix == 2 %}
        wants = flit[ROUTE_BIT] == c[0];
{%- else %}
        wants = flit[ROUTE_BIT +: DW] == c[DW-1:0];
{%- endif %}
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */
{%- if random_lane %}
    function integer zx_lane(input [15:0] v); zx_lane = {16'd0, v}; endfunction
{%- endif %}
    // Lowest set bit of x.
    function [NV-1:0] first_nv(input [NV-1:0] x);
        integer j;
        reg seen;
        begin
            seen = 1'b0;
            for (j = 0; j < NV; j = j + 1) begin
                first_nv[j] = x[j] & ~seen;
                seen = seen | x[j];
            end
        end
    endfunction
    // Thermometer of a round-robin pointer: bit j set iff j >= p.
    function [NV-1:0] from_ptr(input [RRW-1:0] p);
        integer j;
        reg seen;
        begin
            seen = 1'b0;
            for (j = 0; j < NV; j = j + 1) begin
                seen = seen | (p == j[RRW-1:0]);
                from_ptr[j] = seen;
            end
        end
    endfunction
{%- if link_one %}
    // Round-robin pick: the first requester at or after the pointer, else the first one.
    function [NV-1:0] rr_pick(input [NV-1:0] x, input [NV-1:0] therm);
        rr_pick = |(x & therm) ? first_nv(x & therm) : first_nv(x);
    endfunction
{%- endif %}
    // Binary index of a one-hot vector (an OR of constants).
    function [RRW-1:0] enc_nv(input [NV-1:0] oh);
        integer j;
        begin
            enc_nv = {RRW{1'b0}};
            for (j = 0; j < NV; j = j + 1)
                if (oh[j]) enc_nv = enc_nv | j[RRW-1:0];
        end
    endfunction
    // The pointer past a one-hot winner: (winner + 1) mod NV.
    function [RRW-1:0] past(input [NV-1:0] oh);
        integer j;
        reg [NV-1:0] rot;
        begin
            for (j = 0; j < NV; j = j + 1)
                rot[(j + 1) % NV] = oh[j];
            past = enc_nv(rot);
        end
    endfunction
    // One-hot counts saturating at K (bit K: K or more).
    localparam [K:0] ZERO = 1;
    function [K:0] inc(input [K:0] n);
        inc = {n[K-1:0], 1'b0} | {n[K], {K{1'b0}}};
    endfunction
    // One-hot output VC at scan position s of direction c when the scan starts at lane r:
    // port * B + vc.
    function [NO-1:0] ov_at(input integer c, input integer s, input integer r);
        begin
            ov_at = {NO{1'b0}};
            ov_at[(c*M + (r + s % M) % M) * B + s / M] = 1'b1;
        end
    endfunction
{%- endif %}