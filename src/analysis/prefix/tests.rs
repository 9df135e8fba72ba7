//! Small fabrics against brute force, and properties over seeds.
