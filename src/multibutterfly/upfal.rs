//! Upfal's wave algorithm (seed 002 §II-A). (Being written.)
