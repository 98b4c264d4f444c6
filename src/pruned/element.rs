//! A vertex's register elements as the waveform reads them: each element of
//! [`layout`](super::switch::layout) resolved once, by its register's name, to the field of
//! [`VertexRegs`] that holds it, so that sampling a waveform every cycle matches no names.

use super::switch::VertexRegs;
use crate::switch::layout::Register;

/// Where [`VertexRegs`] keeps a declared register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Dir,
    Epos,
    Estate,
    Pres,
    Act,
    Cbit,
    Oa,
    Used,
    Sel,
    D1,
    Dn,
    TieErr,
    Cpos,
    Cpres,
    Csel,
    Up,
    Conflict,
}

/// One element of a declared register: its field and its port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element {
    field: Field,
    port: usize,
}

impl Element {
    /// Element `index` of `register` (as [`layout`](super::switch::layout) declares it).
    pub fn of(register: &Register, index: &[u32]) -> Self {
        let field = match register.name {
            "dir" => Field::Dir,
            "epos" => Field::Epos,
            "estate" => Field::Estate,
            "pres" => Field::Pres,
            "act" => Field::Act,
            "cbit" => Field::Cbit,
            "oa" => Field::Oa,
            "used" => Field::Used,
            "sel" => Field::Sel,
            "d1" => Field::D1,
            "dn" => Field::Dn,
            "tie_err" => Field::TieErr,
            "cpos" => Field::Cpos,
            "cpres" => Field::Cpres,
            "csel" => Field::Csel,
            "up" => Field::Up,
            "conflict" => Field::Conflict,
            other => unreachable!("undeclared register {other}"),
        };
        Element {
            field,
            port: index.first().copied().unwrap_or(0) as usize,
        }
    }
}

impl VertexRegs {
    /// The value of `element`.
    #[inline]
    pub fn get(&self, element: Element) -> u64 {
        let (i, b) = (element.port, |v: bool| u64::from(v));
        match element.field {
            Field::Dir => b(self.dir),
            Field::Epos => u64::from(self.epos),
            Field::Estate => u64::from(self.estate),
            Field::Pres => b(self.pres[i]),
            Field::Act => b(self.act[i]),
            Field::Cbit => b(self.cbit),
            Field::Oa => b(self.oa[i]),
            Field::Used => b(self.used[i]),
            Field::Sel => b(self.sel[i]),
            Field::D1 => b(self.d1[i]),
            Field::Dn => b(self.dn[i]),
            Field::TieErr => b(self.tie_err),
            Field::Cpos => u64::from(self.cpos),
            Field::Cpres => b(self.cpres[i]),
            Field::Csel => b(self.csel[i]),
            Field::Up => b(self.up[i]),
            Field::Conflict => b(self.conflict),
        }
    }

    /// Reads element `index` of `register` (as [`layout`](super::switch::layout) declares it).
    pub fn read(&self, register: &Register, index: &[u32]) -> u64 {
        self.get(Element::of(register, index))
    }
}
