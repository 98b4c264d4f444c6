    // ---- registers (names and widths: src/switch/layout.rs) ----
    reg [NV*CW-1:0]  count_q;
    reg [NV*D*W-1:0] flit_q;
    reg [NV*D-1:0]   head_q;
    reg [NV*D-1:0]   tail_q;
    reg [NV*NS-1:0]  state_q;
    reg [NV*IDW-1:0] owner_q;
{%- if node && !eject %}
    reg [NV-1:0]     eject_q;    // the worm leaves the network here (vc_eject)
{%- endif %}
{%- if !eject %}
    reg [NV*NO-1:0]  held_q;     // output VC held, one-hot per VC (vc_out_port/vc_out_vc)
    reg [NO-1:0]     alloc_valid_q;
    reg [NO*RRW-1:0] alloc_in_q;
    reg [{{ radix }}*RRW-1:0]  rr_q;
    // A header waiting for an output VC in direction c (bit c*NV + i): the request of VC i
    // with the direction of its front flit decoded, kept as a register of its own (derived
    // state, not in the layout) so that allocation starts from flip-flops. It relies on an
    // invariant the model checks: a header enters only a VC that accepts a new worm, becomes
    // its front flit and stays there until it is granted{% if drop_mode %} or dropped{% endif %}.
    reg [{{ radix }}*NV-1:0] req_q;
{%- if link_one %}
    reg [NOUT*RRW-1:0] link_rr_q;
{%- endif %}
{%- if random_lane %}
    reg [15:0]       lfsr_q;
{%- endif %}
{%- endif %}

    // ---- next state ----
    reg [NV*CW-1:0]  count_d;
    reg [NV*D*W-1:0] flit_d;
    reg [NV*D-1:0]   head_d;
    reg [NV*D-1:0]   tail_d;
    reg [NV*NS-1:0]  state_d;
    reg [NV*IDW-1:0] owner_d;
{%- if node && !eject %}
    reg [NV-1:0]     eject_d;
{%- endif %}
{%- if !eject %}
    reg [NV*NO-1:0]  held_d;
    reg [NO-1:0]     alloc_valid_d;
    reg [NO*RRW-1:0] alloc_in_d;
    reg [{{ radix }}*RRW-1:0]  rr_d;
    reg [{{ radix }}*NV-1:0] req_d;
{%- if link_one %}
    reg [NOUT*RRW-1:0] link_rr_d;
{%- endif %}
{%- endif %}