//! The user MAD device through libibumad: one opened port with the SA class registered, and
//! send-then-wait for the matching answer. Under ibsim, `LD_PRELOAD=libumad2sim.so` redirects
//! these calls to the simulator exactly as it does for the infiniband-diags tools.

use std::ffi::c_int;
use std::os::raw::c_void;

use anyhow::{Context, Result, bail};

#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    clippy::all
)]
mod sys {
    include!(concat!(env!("OUT_DIR"), "/umad.rs"));
}

use crate::record::MAD_SIZE;

/// Queue pair 1 and its well-known Q_Key: where the SA listens.
const GSI_QP: c_int = 1;
/// (umad_set_addr takes it as an int; the bits are what matter.)
const GSI_QKEY: c_int = 0x8001_0000_u32 as c_int;
const SA_CLASS: c_int = 0x03;
const SA_CLASS_VERSION: c_int = 2;
/// RMPP version 1: SA answers may be segmented.
const RMPP_VERSION: u8 = 1;

/// What the local port knows about itself and its SM.
#[derive(Debug, Clone, Copy)]
pub struct LocalPort {
    pub sm_lid: u16,
    pub guid: u64,
}

/// An opened port with the SA class registered.
pub struct SaPort {
    fd: c_int,
    agent: c_int,
    local: LocalPort,
    /// `umad_size()` bytes of header followed by the MAD.
    buffer: Vec<u8>,
}

impl SaPort {
    /// Opens the first active port (or `ca`/`port`) and registers the SA class.
    pub fn open(ca: Option<&str>, port: u8) -> Result<Self> {
        let ca_name = ca
            .map(|c| std::ffi::CString::new(c).context("CA name with a NUL byte"))
            .transpose()?;
        let ca_ptr = ca_name.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        // SAFETY: umad_init has no arguments; it may be called more than once.
        if unsafe { sys::umad_init() } < 0 {
            bail!("umad_init failed: is the ib_umad module loaded (or umad2sim preloaded)?");
        }
        let mut info = std::mem::MaybeUninit::<sys::umad_port_t>::zeroed();
        // SAFETY: `info` is a writable umad_port_t; `ca_ptr` is NULL or a NUL-terminated
        // string that outlives the call.
        if unsafe { sys::umad_get_port(ca_ptr, c_int::from(port), info.as_mut_ptr()) } < 0 {
            bail!("no usable InfiniBand port (umad_get_port failed)");
        }
        // SAFETY: umad_get_port succeeded, so it filled the struct.
        let mut info = unsafe { info.assume_init() };
        let local = LocalPort {
            sm_lid: info.sm_lid as u16,
            guid: u64::from_be(info.port_guid),
        };
        // SAFETY: `info` was filled by umad_get_port; releasing frees what it allocated.
        unsafe { sys::umad_release_port(&mut info) };
        // SAFETY: as for umad_get_port above.
        let fd = unsafe { sys::umad_open_port(ca_ptr, c_int::from(port)) };
        if fd < 0 {
            bail!("umad_open_port failed ({fd})");
        }
        // SAFETY: `fd` is an open umad port; a NULL method mask registers no unsolicited
        // methods (we only receive answers to our own requests).
        let agent = unsafe {
            sys::umad_register(
                fd,
                SA_CLASS,
                SA_CLASS_VERSION,
                RMPP_VERSION,
                std::ptr::null_mut(),
            )
        };
        if agent < 0 {
            // SAFETY: `fd` is ours and open.
            unsafe { sys::umad_close_port(fd) };
            bail!("registering the SA class failed ({agent})");
        }
        // SAFETY: umad_size has no arguments.
        let header = unsafe { sys::umad_size() };
        Ok(SaPort {
            fd,
            agent,
            local,
            buffer: vec![0; header + MAD_SIZE],
        })
    }

    pub fn local(&self) -> LocalPort {
        self.local
    }

    /// Sends `mad` to the SM's LID and returns the first answer whose transaction id matches
    /// (its low 32 bits: the kernel may put its agent into the high ones).
    pub fn request(
        &mut self,
        mad: &[u8; MAD_SIZE],
        tid: u64,
        timeout_ms: i32,
        retries: i32,
    ) -> Result<Vec<u8>> {
        if self.local.sm_lid == 0 {
            bail!("the port knows no SM yet (SM LID 0): is OpenSM running and the subnet up?");
        }
        self.buffer.fill(0);
        let umad = self.buffer.as_mut_ptr().cast::<c_void>();
        // SAFETY: `umad` points at umad_size() + MAD_SIZE writable bytes; umad_get_mad returns
        // the MAD area inside them, which holds MAD_SIZE bytes.
        unsafe {
            sys::umad_set_addr(umad, c_int::from(self.local.sm_lid), GSI_QP, 0, GSI_QKEY);
            let area = sys::umad_get_mad(umad).cast::<u8>();
            std::ptr::copy_nonoverlapping(mad.as_ptr(), area, MAD_SIZE);
        }
        // SAFETY: the buffer holds a complete umad with its address set; length is the MAD's.
        let sent = unsafe {
            sys::umad_send(
                self.fd,
                self.agent,
                umad,
                MAD_SIZE as c_int,
                timeout_ms,
                retries,
            )
        };
        if sent < 0 {
            bail!("umad_send failed ({sent})");
        }
        loop {
            let mut length = MAD_SIZE as c_int;
            self.buffer.fill(0);
            let umad = self.buffer.as_mut_ptr().cast::<c_void>();
            // SAFETY: the buffer holds umad_size() + MAD_SIZE bytes and `length` says so.
            let got =
                unsafe { sys::umad_recv(self.fd, umad, &mut length, timeout_ms * (retries + 1)) };
            if got < 0 {
                bail!(
                    "no answer from the SA within {} ms",
                    timeout_ms * (retries + 1)
                );
            }
            // SAFETY: `umad` holds a received umad.
            let status = unsafe { sys::umad_status(umad) };
            if status != 0 {
                bail!("the request timed out or failed in the MAD layer (umad status {status})");
            }
            // SAFETY: as above; the MAD area is MAD_SIZE bytes long.
            let received = unsafe {
                std::slice::from_raw_parts(sys::umad_get_mad(umad).cast::<u8>(), MAD_SIZE).to_vec()
            };
            let answer_tid = u64::from_be_bytes(received[8..16].try_into().expect("8 bytes"));
            if answer_tid as u32 == tid as u32 {
                return Ok(received);
            }
        }
    }
}

impl Drop for SaPort {
    fn drop(&mut self) {
        // SAFETY: `fd` was opened by umad_open_port and is closed once, here.
        unsafe { sys::umad_close_port(self.fd) };
    }
}
