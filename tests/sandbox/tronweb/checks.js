// TronWeb (the official JavaScript SDK, unchanged) against the sandbox's chain.
// One process runs every check and prints one JSON object: {check: result | {error}}.
// Input (stdin, JSON; keys never on the command line): url, usdt, owner_key, other_key,
// holder (a USDT holder), wallet_key (a hot wallet's owner key, 150 TRX), payout_key,
// token (an 18-decimal token the owner holds), token_to and trx_to (addresses with nothing).
'use strict';
const { TronWeb } = require('tronweb');

const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const tronWeb = new TronWeb({ fullHost: input.url, privateKey: input.owner_key });
const owner = tronWeb.defaultAddress.base58;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const results = {};

async function check(name, run) {
  try {
    results[name] = await run();
  } catch (error) {
    results[name] = { error: String((error && error.message) || error) };
  }
}

async function receipt(txid, confirmed = false) {
  for (let i = 0; i < 800; i += 1) {
    const info = confirmed
      ? await tronWeb.trx.getTransactionInfo(txid)
      : await tronWeb.trx.getUnconfirmedTransactionInfo(txid);
    if (info && Object.keys(info).length) return info;
    await sleep(25);
  }
  throw new Error(`no receipt for ${txid}`);
}

const transferParams = (to, units) => [
  { type: 'address', value: to },
  { type: 'uint256', value: units },
];

async function main() {
  await check('account', async () => {
    const account = await tronWeb.trx.getAccount(owner);
    const balance = await tronWeb.trx.getBalance(owner);
    const resources = await tronWeb.trx.getAccountResources(owner);
    const unconfirmed = await tronWeb.trx.getUnconfirmedAccount(tronWeb.address.toHex(owner));
    return { address: account.address, balance, unconfirmed_balance: unconfirmed.balance,
      free_net_limit: resources.freeNetLimit };
  });
  const usdt = await tronWeb.contract().at(input.usdt);
  await check('usdt_balance', async () => ({
    owner: (await usdt.balanceOf(owner).call()).toString(),
    decimals: Number(await usdt.decimals().call()),
  }));
  await check('estimate', async () => {
    const estimated = await tronWeb.transactionBuilder.estimateEnergy(
      input.usdt, 'transfer(address,uint256)', {}, transferParams(input.holder, 1), owner);
    const constant = await tronWeb.transactionBuilder.triggerConstantContract(
      input.usdt, 'transfer(address,uint256)', {}, transferParams(input.holder, 1), owner);
    return { energy_required: estimated.energy_required, energy_used: constant.energy_used };
  });
  await check('usdt_transfer', async () => {
    const built = await tronWeb.transactionBuilder.triggerSmartContract(
      input.usdt, 'transfer(address,uint256)', { feeLimit: 30000000 },
      transferParams(input.holder, 1500000), owner);
    const signed = await tronWeb.trx.sign(built.transaction);
    const sent = await tronWeb.trx.sendRawTransaction(signed);
    const info = await receipt(sent.txid || signed.txID);
    const log = info.log[0];
    return { result: sent.result, txid: sent.txid, receipt: info.receipt,
      contract_address: info.contract_address, log_address: log.address,
      log_from: tronWeb.address.fromHex('41' + log.topics[1].slice(24)),
      log_to: tronWeb.address.fromHex('41' + log.topics[2].slice(24)),
      log_units: parseInt(log.data, 16),
      holder_after: (await usdt.balanceOf(input.holder).call()).toString() };
  });
  let trxSigned = null;
  await check('trx_transfer', async () => {
    const built = await tronWeb.transactionBuilder.sendTrx(input.holder, 2000000, owner);
    trxSigned = await tronWeb.trx.sign(built);
    const sent = await tronWeb.trx.sendRawTransaction(trxSigned);
    const info = await receipt(sent.txid);
    // Production paused: the solidity API still answers the state before the transfer's
    // block is solidified (19 blocks), the full node's API the head's.
    await fetch(`${input.url}/sandbox/chain/pause`, { method: 'POST' });
    const solidBlock = (await tronWeb.trx.getConfirmedCurrentBlock()).block_header.raw_data.number;
    const solidBalance = await tronWeb.trx.getBalance(input.holder);
    const headBalance = await tronWeb.trx.getUnconfirmedBalance(input.holder);
    await fetch(`${input.url}/sandbox/chain/resume`, { method: 'POST' });
    const confirmed = await receipt(sent.txid, true);
    const confirmedBalance = await tronWeb.trx.getBalance(input.holder);
    const shown = await tronWeb.trx.getTransaction(sent.txid);
    return { result: sent.result, txid: sent.txid, fee: info.fee || 0,
      block: info.blockNumber, confirmed_block: confirmed.blockNumber,
      to_address: shown.raw_data.contract[0].parameter.value.to_address,
      contract_ret: shown.ret[0].contractRet, solid_block: solidBlock,
      solid_balance: solidBalance, head_balance: headBalance,
      confirmed_balance: confirmedBalance };
  });
  await check('duplicate', async () => {
    const again = await tronWeb.trx.sendRawTransaction(trxSigned);
    return { code: again.code, result: again.result || false };
  });
  await check('expired', async () => {
    const head = await tronWeb.trx.getCurrentBlock();
    const { number, timestamp } = head.block_header.raw_data;
    const blockHeader = { ref_block_bytes: number.toString(16).slice(-4).padStart(4, '0'),
      ref_block_hash: head.blockID.slice(16, 32), expiration: timestamp - 1000,
      timestamp: timestamp - 61000 };
    const built = await tronWeb.transactionBuilder.sendTrx(
      input.holder, 1000000, owner, { blockHeader });
    const sent = await tronWeb.trx.sendRawTransaction(await tronWeb.trx.sign(built));
    return { code: sent.code, result: sent.result || false };
  });
  await check('wrong_signer', async () => {
    const built = await tronWeb.transactionBuilder.sendTrx(input.holder, 1000000, owner);
    const signed = tronWeb.utils.crypto.signTransaction(input.other_key, built);
    const sent = await tronWeb.trx.sendRawTransaction(signed);
    return { code: sent.code, result: sent.result || false };
  });
  await check('permission_update', async () => {
    // The hot wallet's owner gives the payout key an active permission limited to
    // TriggerSmartContract (operations bit 31), through a signed AccountPermissionUpdate.
    const wallet = tronWeb.address.fromPrivateKey(input.wallet_key);
    const payout = tronWeb.address.fromPrivateKey(input.payout_key);
    const operations = '0000008000000000000000000000000000000000000000000000000000000000';
    const built = await tronWeb.transactionBuilder.updateAccountPermissions(
      tronWeb.address.toHex(wallet),
      { type: 0, permission_name: 'owner', threshold: 1,
        keys: [{ address: tronWeb.address.toHex(wallet), weight: 1 }] },
      null,
      [{ type: 2, permission_name: 'payouts', threshold: 1, operations,
        keys: [{ address: tronWeb.address.toHex(payout), weight: 1 }] }]);
    const signed = tronWeb.utils.crypto.signTransaction(input.wallet_key, built);
    const sent = await tronWeb.trx.sendRawTransaction(signed);
    const info = await receipt(sent.txid || signed.txID);
    // At the head: getAccount reads the solidity API, where the update is not yet.
    const account = await tronWeb.trx.getUnconfirmedAccount(tronWeb.address.toHex(wallet));
    // Under the new permission: the payout key's USDT transfer is taken, its TRX refused.
    const call = await tronWeb.transactionBuilder.triggerSmartContract(
      input.usdt, 'transfer(address,uint256)', { feeLimit: 30000000, permissionId: 2 },
      transferParams(input.holder, 1000000), wallet);
    const usdtSent = await tronWeb.trx.sendRawTransaction(
      tronWeb.utils.crypto.signTransaction(input.payout_key, call.transaction));
    const usdtInfo = await receipt(usdtSent.txid);
    const trx = await tronWeb.transactionBuilder.sendTrx(input.holder, 1000000, wallet,
      { permissionId: 2 });
    const trxSent = await tronWeb.trx.sendRawTransaction(
      tronWeb.utils.crypto.signTransaction(input.payout_key, trx));
    return { result: sent.result || false, code: sent.code, fee: info.fee,
      active: account.active_permission, balance: account.balance,
      usdt_result: usdtInfo.receipt.result, trx_code: trxSent.code,
      trx_message: trxSent.message ? Buffer.from(trxSent.message, 'hex').toString() : '' };
  });
  await check('token_transfer', async () => {
    // A token of the sandbox's own (18 decimals) through TronWeb's contract object.
    const token = await tronWeb.contract().at(input.token);
    const txid = await token.transfer(input.token_to, '10000000000000000000001')
      .send({ feeLimit: 100000000 });
    const info = await receipt(txid);
    return { decimals: Number(await token.decimals().call()), result: info.receipt.result,
      energy: info.receipt.energy_usage_total, log_address: info.log[0].address,
      to_after: (await token.balanceOf(input.token_to).call()).toString(),
      owner_after: (await token.balanceOf(owner).call()).toString() };
  });
  await check('trx_send', async () => {
    // trx.send (sendTransaction) to an address that has no account yet.
    const sent = await tronWeb.trx.send(input.trx_to, 1000000);
    const info = await receipt(sent.txid || sent.transaction.txID);
    return { result: sent.result, fee: info.fee, receipt: info.receipt,
      to_balance: await tronWeb.trx.getUnconfirmedBalance(input.trx_to) };
  });
  process.stdout.write(JSON.stringify(results));
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ ...results, fatal: String(error && error.stack) }));
});
