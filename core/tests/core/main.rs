//! Integration tests of the core: fast kernels against the slow reference,
//! symmetry properties, and whole small games against published figures.

mod game_figures;
mod properties;
