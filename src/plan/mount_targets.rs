//! (placeholder until the plan branch lands)
use crate::policy::MissingReadOnly;
pub struct Reservation;
pub fn reserve(_t: &[MissingReadOnly]) -> Reservation { Reservation }
