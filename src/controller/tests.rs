//! What the controllers' tests share: a fake apiserver that pins every request of a reconcile.

pub(crate) mod fake_apiserver;
