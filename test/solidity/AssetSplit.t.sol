// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {AssetSplit} from "../../contracts/AssetSplit.sol";
import {AssetSplitFactory} from "../../contracts/AssetSplitFactory.sol";
import {IAssetSplit} from "../../contracts/interfaces/IAssetSplit.sol";
import {PaymentRouter} from "../../contracts/PaymentRouter.sol";
import {TestStablecoin} from "../../contracts/TestStablecoin.sol";

/// @dev The few cheatcodes these tests use (no forge-std in this project).
interface Vm {
    function prank(address sender) external;
    function expectRevert(bytes calldata revertData) external;
    function assume(bool condition) external pure;
    function addr(uint256 privateKey) external pure returns (address);
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
}

/// @notice Fuzz tests of the split arithmetic and accounting, on a split created by the factory (the factory's
/// shares are fixed at its deployment: a test of other shares deploys a factory with them): for any gross in
/// [1, 2**127] and any valid share triple, the legs sum to gross, the operator and protocol legs are rounded down and the asset-owner leg takes
/// the remainder; settlements (of at most the 2**96 - 1 the split can owe) credit exactly those legs, must be
/// backed by tokens beyond what is owed, and withdrawals pay exactly the credits. Throughout, the split's balance
/// is the sum of what it owes plus the surplus (tokens sent to it directly), and donations never change a credit.
contract AssetSplitFuzzTest {
    Vm private constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);

    uint256 private constant MAX_GROSS = 2 ** 127;
    /// @dev The most the split can owe in total (what it owes, credits and accruals, is tracked as a uint96).
    uint256 private constant MAX_OWED = type(uint96).max;
    address private constant OWNER = address(0xA11CE);
    address private constant OPERATOR = address(0xB0B);
    address private constant PROTOCOL = address(0xC4A7);
    address private constant NEW_OWNER = address(0xD00D);
    address private constant NEW_OPERATOR = address(0xE7E);
    bytes32 private constant DEVICE_KEY = keccak256("device");
    /// @dev The split's asset key: the device key bound to its first recipients (SplitAddress.assetKeyOf).
    bytes32 private constant ASSET_KEY = keccak256(abi.encode(DEVICE_KEY, OWNER, OPERATOR));

    TestStablecoin private token;
    PaymentRouter private router;
    AssetSplitFactory private factory;
    AssetSplit private split;

    function setUp() public {
        token = new TestStablecoin("USD Coin (test)", "USDC", address(this));
        router = new PaymentRouter(address(this), 0);
        _useShares([uint16(5000), 4000, 1000]);
    }

    /// @dev Replaces the factory with one of shares `bps` (this contract its admin, split manager and depositor;
    /// no recipient-change delay) and the split with that factory's split of the asset key, for the original recipients.
    function _useShares(uint16[3] memory bps) private {
        factory = new AssetSplitFactory(IERC20(address(token)), address(router), PROTOCOL, bps, address(this), 0, 0);
        factory.grantRole(factory.SPLIT_MANAGER_ROLE(), address(this));
        factory.grantRole(factory.DEPOSITOR_ROLE(), address(this));
        split = AssetSplit(factory.createSplit(DEVICE_KEY, OWNER, OPERATOR));
    }

    // ---------------------------------------------------------------- helpers

    /// @dev A recipient change through the factory: proposed (this contract is the split manager) and executed at
    /// once (the factory has no delay).
    function _setRecipients(address assetOwner, address operator) private {
        factory.proposeRecipients(ASSET_KEY, assetOwner, operator);
        factory.executeRecipients(ASSET_KEY);
    }

    function _bound(uint256 x, uint256 min, uint256 max) private pure returns (uint256) {
        return min + x % (max - min + 1);
    }

    /// @dev A valid share triple (asset owner, operator, protocol) from two seeds.
    function _bps(uint256 operatorSeed, uint256 protocolSeed) private pure returns (uint16[3] memory bps) {
        uint256 operatorBps = _bound(operatorSeed, 0, 10_000);
        uint256 protocolBps = _bound(protocolSeed, 0, 10_000 - operatorBps);
        bps = [uint16(10_000 - operatorBps - protocolBps), uint16(operatorBps), uint16(protocolBps)];
    }

    function _expectedLegs(uint256 gross, uint16[3] memory bps) private pure returns (uint256[3] memory legs) {
        legs[1] = gross * bps[1] / 10_000;
        legs[2] = gross * bps[2] / 10_000;
        legs[0] = gross - legs[1] - legs[2];
    }

    function _settle(bytes32 ref, uint256 gross) private {
        token.mint(address(split), gross);
        split.settle(ref, gross);
    }

    /// @dev The sum of what every address these tests use is owed.
    function _owed() private view returns (uint256 sum) {
        address[5] memory everyone = [OWNER, OPERATOR, PROTOCOL, NEW_OWNER, NEW_OPERATOR];
        for (uint256 i; i < everyone.length; ++i) {
            sum += split.claimable(everyone[i]);
        }
    }

    /// @dev Pays out every address these tests use that is owed something, and checks each got exactly that.
    function _releaseEveryone() private {
        address[5] memory everyone = [OWNER, OPERATOR, PROTOCOL, NEW_OWNER, NEW_OPERATOR];
        for (uint256 i; i < everyone.length; ++i) {
            uint256 owed = split.claimable(everyone[i]);
            if (owed == 0) continue;
            uint256 before = token.balanceOf(everyone[i]);
            _eq(split.release(everyone[i]), owed, "release returns the credit");
            _eq(token.balanceOf(everyone[i]) - before, owed, "release pays the credit");
        }
    }

    /// @dev The invariant: balance == everything owed + surplus, with the surplus expected.
    function _assertBacked(uint256 expectedSurplus) private view {
        _eq(split.surplus(), expectedSurplus, "surplus");
        _eq(token.balanceOf(address(split)), _owed() + expectedSurplus, "balance == owed + surplus");
    }

    function _eq(uint256 a, uint256 b, string memory what) private pure {
        if (a != b) revert(string.concat(what, ": got ", _str(a), ", expected ", _str(b)));
    }

    function _str(uint256 x) private pure returns (string memory s) {
        if (x == 0) return "0";
        bytes memory b;
        while (x != 0) {
            b = abi.encodePacked(bytes1(uint8(48 + x % 10)), b);
            x /= 10;
        }
        return string(b);
    }

    // ---------------------------------------------------------------- previewSplit

    function testFuzz_previewSplitLegsSumToGrossWithRemainderToAssetOwner(
        uint256 grossSeed,
        uint256 operatorSeed,
        uint256 protocolSeed
    ) public {
        uint256 gross = _bound(grossSeed, 1, MAX_GROSS);
        uint16[3] memory bps = _bps(operatorSeed, protocolSeed);
        _useShares(bps);

        uint256[3] memory legs = split.previewSplit(gross);
        _eq(legs[0] + legs[1] + legs[2], gross, "legs sum");
        _eq(legs[1], gross * bps[1] / 10_000, "operator leg is floor(gross * bps / 10000)");
        _eq(legs[2], gross * bps[2] / 10_000, "protocol leg is floor(gross * bps / 10000)");
        _eq(legs[0], gross - legs[1] - legs[2], "asset owner leg is the remainder");
        // The remainder is the asset owner's own floor plus the two rounding losses (each below one unit).
        uint256 ownerFloor = gross * bps[0] / 10_000;
        require(legs[0] >= ownerFloor && legs[0] - ownerFloor <= 2, "asset owner leg within 2 units of its exact share");
    }

    function testFuzz_previewSplitAtDefaultShares(uint256 grossSeed) public view {
        uint256 gross = _bound(grossSeed, 1, MAX_GROSS);
        uint256[3] memory legs = split.previewSplit(gross);
        _eq(legs[1], gross * 4000 / 10_000, "operator");
        _eq(legs[2], gross * 1000 / 10_000, "protocol");
        _eq(legs[0] + legs[1] + legs[2], gross, "sum");
    }

    // ---------------------------------------------------------------- settle and claimable

    function testFuzz_settleCreditsExactlyThePreviewedLegs(uint256 grossSeed, uint256 operatorSeed, uint256 protocolSeed)
        public
    {
        uint256 gross = _bound(grossSeed, 1, MAX_OWED);
        uint16[3] memory bps = _bps(operatorSeed, protocolSeed);
        _useShares(bps);
        uint256[3] memory legs = split.previewSplit(gross);

        _settle(bytes32(grossSeed), gross);

        _eq(split.claimable(OWNER), legs[0], "owner claimable");
        _eq(split.claimable(OPERATOR), legs[1], "operator claimable");
        _eq(split.claimable(PROTOCOL), legs[2], "protocol claimable");
        _eq(split.claimable(OWNER) + split.claimable(OPERATOR) + split.claimable(PROTOCOL), gross, "claimable sum");
        _eq(token.balanceOf(address(split)), gross, "balance");
        _assertBacked(0);
    }

    function testFuzz_twoSettlementsAroundARecipientChange(
        uint256 grossSeed1,
        uint256 grossSeed2,
        uint256 operatorSeed,
        uint256 protocolSeed
    ) public {
        uint256 gross1 = _bound(grossSeed1, 1, MAX_OWED / 2);
        uint256 gross2 = _bound(grossSeed2, 1, MAX_OWED - gross1);
        uint16[3] memory bps = _bps(operatorSeed, protocolSeed);
        _useShares(bps);
        uint256[3] memory legs1 = _expectedLegs(gross1, bps);
        uint256[3] memory legs2 = _expectedLegs(gross2, bps);

        _settle(bytes32(uint256(1)), gross1);
        _setRecipients(NEW_OWNER, NEW_OPERATOR);
        _settle(bytes32(uint256(2)), gross2);

        _eq(split.claimable(OWNER), legs1[0], "old owner keeps its accrual");
        _eq(split.claimable(OPERATOR), legs1[1], "old operator keeps its accrual");
        _eq(split.claimable(PROTOCOL), legs1[2] + legs2[2], "protocol gets both");
        _eq(split.claimable(NEW_OWNER), legs2[0], "new owner");
        _eq(split.claimable(NEW_OPERATOR), legs2[1], "new operator");
        _assertBacked(0);

        address[5] memory everyone = [OWNER, OPERATOR, PROTOCOL, NEW_OWNER, NEW_OPERATOR];
        uint256 paid;
        for (uint256 i; i < everyone.length; ++i) {
            uint256 expected = split.claimable(everyone[i]);
            if (expected == 0) continue;
            vm.prank(everyone[i]);
            uint256 amount = split.withdraw(everyone[i]);
            _eq(amount, expected, "withdraw returns the claimable amount");
            _eq(token.balanceOf(everyone[i]), expected, "withdraw pays the claimable amount");
            _eq(split.claimable(everyone[i]), 0, "nothing left");
            paid += amount;
            _assertBacked(0);
        }
        _eq(paid, gross1 + gross2, "everything paid out");
        _eq(token.balanceOf(address(split)), 0, "split empty");
    }

    function testFuzz_recipientOfSeveralLegsGetsTheirSum(uint256 grossSeed, uint256 operatorSeed, uint256 protocolSeed)
        public
    {
        uint256 gross = _bound(grossSeed, 1, MAX_OWED);
        uint16[3] memory bps = _bps(operatorSeed, protocolSeed);
        _useShares(bps);
        _setRecipients(OWNER, OWNER);
        uint256[3] memory legs = _expectedLegs(gross, bps);
        _settle(bytes32(0), gross);

        _eq(split.claimable(OWNER), legs[0] + legs[1], "two legs");
        _eq(split.claimable(PROTOCOL), legs[2], "protocol");
        if (legs[0] + legs[1] != 0) {
            uint256 amount = split.release(OWNER);
            _eq(amount, legs[0] + legs[1], "release pays both legs");
            _eq(token.balanceOf(OWNER), legs[0] + legs[1], "balance");
        }
        _eq(split.claimable(OWNER), 0, "nothing left");
        _assertBacked(0);
    }

    function testFuzz_onlyTheRouterAndDepositorsSettle(address caller, uint256 grossSeed) public {
        vm.assume(caller != address(this) && caller != address(router));
        uint256 gross = _bound(grossSeed, 1, MAX_GROSS);
        token.mint(address(split), gross);
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(AssetSplit.NotDepositor.selector, caller));
        split.settle(bytes32(0), gross);
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(AssetSplit.NotDepositor.selector, caller));
        split.deposit(bytes32(0), gross);
        _assertBacked(gross);
    }

    // ---------------------------------------------------------------- backing, surplus and capacity

    function testFuzz_donationsNeverChangeClaimable(
        uint256 grossSeed,
        uint256 donationSeed,
        uint256 secondSeed,
        uint256 operatorSeed,
        uint256 protocolSeed
    ) public {
        uint16[3] memory bps = _bps(operatorSeed, protocolSeed);
        _useShares(bps);
        uint256 gross = _bound(grossSeed, 1, MAX_OWED / 2);
        uint256 donation = _bound(donationSeed, 1, type(uint128).max);
        uint256 second = _bound(secondSeed, 1, MAX_OWED - gross);
        _settle(bytes32(uint256(1)), gross);
        uint256[3] memory legs = _expectedLegs(gross, bps);

        token.mint(address(split), donation);
        _eq(split.claimable(OWNER), legs[0], "owner unchanged by the donation");
        _eq(split.claimable(OPERATOR), legs[1], "operator unchanged by the donation");
        _eq(split.claimable(PROTOCOL), legs[2], "protocol unchanged by the donation");
        _assertBacked(donation);

        // A later settlement credits its own legs only, not the donation.
        _settle(bytes32(uint256(2)), second);
        uint256[3] memory legs2 = _expectedLegs(second, bps);
        _eq(split.claimable(OWNER), legs[0] + legs2[0], "owner");
        _eq(split.claimable(OPERATOR), legs[1] + legs2[1], "operator");
        _eq(split.claimable(PROTOCOL), legs[2] + legs2[2], "protocol");
        _assertBacked(donation);

        // Withdrawals pay exactly the credits; the donation stays surplus until the admin recovers it.
        address[3] memory recipients = [OWNER, OPERATOR, PROTOCOL];
        for (uint256 i; i < 3; ++i) {
            uint256 expected = split.claimable(recipients[i]);
            if (expected == 0) continue;
            _eq(split.release(recipients[i]), expected, "release pays the credit");
            _assertBacked(donation);
        }
        _eq(token.balanceOf(address(split)), donation, "only the donation is left");
        _eq(factory.recoverSurplus(ASSET_KEY, address(0xDEAD)), donation, "recoverSurplus returns the surplus");
        _eq(token.balanceOf(address(0xDEAD)), donation, "recoverSurplus pays the surplus");
        _assertBacked(0);
        _eq(token.balanceOf(address(split)), 0, "split empty");
    }

    function testFuzz_unbackedSettlementReverts(uint256 owedSeed, uint256 grossSeed, uint256 backingSeed) public {
        uint256 owed = _bound(owedSeed, 0, MAX_OWED / 2);
        if (owed != 0) _settle(bytes32(uint256(1)), owed);
        uint256 gross = _bound(grossSeed, 1, MAX_OWED - owed);
        uint256 backing = _bound(backingSeed, 0, gross - 1);
        token.mint(address(split), backing);

        vm.expectRevert(abi.encodeWithSelector(IAssetSplit.UnbackedSettlement.selector, gross, backing));
        split.settle(bytes32(uint256(2)), gross);
        _eq(_owed(), owed, "nothing credited");
        _assertBacked(backing);

        // Topped up to exactly gross, the same settlement goes through and leaves no surplus.
        token.mint(address(split), gross - backing);
        split.settle(bytes32(uint256(2)), gross);
        _eq(_owed(), owed + gross, "credited");
        _assertBacked(0);
        vm.expectRevert(abi.encodeWithSelector(IAssetSplit.UnbackedSettlement.selector, 1, 0));
        split.settle(bytes32(uint256(3)), 1);
    }

    function test_owedCapacityIsUint96() public {
        _settle(bytes32(uint256(1)), MAX_OWED);
        token.mint(address(split), 1);
        vm.expectRevert(abi.encodeWithSelector(SafeCast.SafeCastOverflowedUintDowncast.selector, 96, MAX_OWED + 1));
        split.settle(bytes32(uint256(2)), 1);
        _assertBacked(1);
        // A withdrawal makes room.
        split.release(PROTOCOL);
        split.settle(bytes32(uint256(2)), 1);
        _assertBacked(0);
    }

    /// @dev The operator and protocol accruals are uint72s of the settlement slot: a settlement that would overflow
    /// one is credited at once, with the accruals before it, to the recipients of the time. Credits stay exact,
    /// a later recipient change moves nothing, and settlements after it accrue again.
    function testFuzz_accrualsBeyondUint72StayExact(
        uint256 grossSeed1,
        uint256 grossSeed2,
        uint256 grossSeed3,
        uint256 operatorSeed,
        uint256 protocolSeed
    ) public {
        uint16[3] memory bps = _bps(operatorSeed, protocolSeed);
        _useShares(bps);
        uint256[3] memory gross = [
            _bound(grossSeed1, 1, MAX_OWED / 3),
            _bound(grossSeed2, type(uint72).max, MAX_OWED / 3),
            _bound(grossSeed3, 1, MAX_OWED / 3)
        ];
        _settle(bytes32(uint256(1)), gross[0]);
        _settle(bytes32(uint256(2)), gross[1]);
        _setRecipients(NEW_OWNER, NEW_OPERATOR);
        _settle(bytes32(uint256(3)), gross[2]);

        uint256[3] memory legs1 = _expectedLegs(gross[0], bps);
        uint256[3] memory legs2 = _expectedLegs(gross[1], bps);
        uint256[3] memory legs3 = _expectedLegs(gross[2], bps);
        _eq(split.claimable(OWNER), legs1[0] + legs2[0], "old asset owner");
        _eq(split.claimable(OPERATOR), legs1[1] + legs2[1], "old operator");
        _eq(split.claimable(PROTOCOL), legs1[2] + legs2[2] + legs3[2], "protocol");
        _eq(split.claimable(NEW_OWNER), legs3[0], "new asset owner");
        _eq(split.claimable(NEW_OPERATOR), legs3[1], "new operator");
        _assertBacked(0);
        _releaseEveryone();
        _eq(token.balanceOf(address(split)), 0, "everything owed was paid out");
    }

    function test_accrualOverflowCreditsAtOnce() public {
        _useShares([uint16(0), 10_000, 0]);
        uint256 maxAccrual = type(uint72).max;
        _settle(bytes32(uint256(1)), maxAccrual);
        _settle(bytes32(uint256(2)), 1); // the operator's accrual would need 73 bits
        _eq(split.claimable(OPERATOR), maxAccrual + 1, "accrued, then credited at once");
        _settle(bytes32(uint256(3)), 5); // accrues again from zero
        _setRecipients(OWNER, NEW_OPERATOR);
        _eq(split.claimable(OPERATOR), maxAccrual + 6, "the old operator keeps what accrued before the change");
        _eq(split.claimable(NEW_OPERATOR), 0, "the new operator gets nothing of it");
        _assertBacked(0);
        _releaseEveryone();
        _eq(token.balanceOf(address(split)), 0, "everything owed was paid out");
    }

    function testFuzz_onlyTheFactoryAdminRecoversSurplus(address caller, uint256 donationSeed) public {
        vm.assume(caller != address(this) && caller != address(factory));
        uint256 donation = _bound(donationSeed, 1, type(uint128).max);
        token.mint(address(split), donation);
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, caller, bytes32(0)));
        factory.recoverSurplus(ASSET_KEY, caller);
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(AssetSplit.OnlyFactory.selector, caller));
        split.recoverSurplus(caller);
        _assertBacked(donation);
    }

    function test_recoverSurplusWithoutSurplusReverts() public {
        vm.expectRevert(abi.encodeWithSelector(IAssetSplit.NothingToWithdraw.selector, address(split)));
        factory.recoverSurplus(ASSET_KEY, address(this));
        _settle(bytes32(0), 1_000);
        vm.expectRevert(abi.encodeWithSelector(IAssetSplit.NothingToWithdraw.selector, address(split)));
        factory.recoverSurplus(ASSET_KEY, address(this));
    }

    function test_factoryRejectsAssetZero() public {
        vm.expectRevert(abi.encodeWithSelector(IAssetSplit.InvalidAsset.selector));
        new AssetSplitFactory(IERC20(address(0)), address(router), PROTOCOL, [uint16(5000), 4000, 1000], address(this), 0, 0);
    }

    function test_settleOfZeroReverts() public {
        vm.expectRevert(abi.encodeWithSelector(IAssetSplit.ZeroAmount.selector));
        split.settle(bytes32(0), 0);
    }

    function test_roundingExamples() public view {
        uint256[3] memory legs = split.previewSplit(9_999);
        _eq(legs[0], 5_001, "9999 owner");
        _eq(legs[1], 3_999, "9999 operator");
        _eq(legs[2], 999, "9999 protocol");
        legs = split.previewSplit(7);
        _eq(legs[0], 5, "7 owner");
        _eq(legs[1], 2, "7 operator");
        _eq(legs[2], 0, "7 protocol");
    }
}

/// @notice Fuzz tests of the router's approval rail with vouchers signed through the `sign` cheatcode, paying
/// through the device's split created by the router's split factory.
contract PaymentRouterFuzzTest {
    Vm private constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);
    uint256 private constant QUOTE_SIGNER_KEY = 0x5157;

    TestStablecoin private token;
    AssetSplit private split;
    PaymentRouter private router;
    AssetSplitFactory private factory;

    function setUp() public {
        token = new TestStablecoin("USD Coin (test)", "USDC", address(this));
        router = new PaymentRouter(address(this), 0);
        factory = _factory();
        router.setSplitFactory(factory);
        split = AssetSplit(factory.createSplit(keccak256("device"), address(0xA11CE), address(0xB0B)));
        router.grantRole(router.QUOTE_SIGNER_ROLE(), vm.addr(QUOTE_SIGNER_KEY));
        token.mint(address(this), type(uint128).max);
        token.approve(address(router), type(uint256).max);
    }

    function _order(uint256 orderId, uint256 amount) private view returns (PaymentRouter.PaymentOrder memory) {
        return PaymentRouter.PaymentOrder({
            orderId: orderId,
            deviceId: keccak256(abi.encode(keccak256("device"), address(0xA11CE), address(0xB0B))),
            token: address(token),
            split: address(split),
            amount: amount,
            expiry: uint64(block.timestamp)
        });
    }

    function _voucher(PaymentRouter.PaymentOrder memory order) private view returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(QUOTE_SIGNER_KEY, router.hashOrder(order));
        return abi.encodePacked(r, s, v);
    }

    function testFuzz_payMarksExactlyOneOrderAndSettlesTheAmount(uint256 orderId, uint256 amountSeed) public {
        uint256 amount = 1 + amountSeed % type(uint96).max;
        PaymentRouter.PaymentOrder memory order = _order(orderId, amount);
        bytes memory voucher = _voucher(order);

        require(!router.isPaid(orderId), "unpaid before");
        router.pay(order, voucher);

        require(router.isPaid(orderId), "paid after");
        require(!router.isPaid(orderId ^ 1), "the neighbour bit is untouched");
        require(!router.isPaid(orderId ^ (1 << 8)), "the neighbour word is untouched");
        require(token.balanceOf(address(split)) == amount, "split received the amount");
        require(token.balanceOf(address(router)) == 0, "router keeps nothing");
        uint256 credited =
            split.claimable(address(0xA11CE)) + split.claimable(address(0xB0B)) + split.claimable(address(0xC4A7));
        require(credited == amount, "claimable sums to the amount");
        require(split.surplus() == 0, "no surplus: the split holds exactly what it owes");

        vm.expectRevert(abi.encodeWithSelector(PaymentRouter.OrderAlreadyPaid.selector, orderId));
        router.pay(order, voucher);
    }

    function testFuzz_voucherBindsTheAmount(uint256 orderId, uint256 amountSeed, uint256 otherSeed) public {
        uint256 amount = 1 + amountSeed % type(uint96).max;
        uint256 other = 1 + otherSeed % type(uint96).max;
        vm.assume(other != amount);
        bytes memory voucher = _voucher(_order(orderId, amount));
        PaymentRouter.PaymentOrder memory tampered = _order(orderId, other);
        (bool ok, bytes memory ret) = address(router).call(abi.encodeCall(PaymentRouter.pay, (tampered, voucher)));
        require(!ok, "a tampered order must not pay");
        require(bytes4(ret) == PaymentRouter.InvalidVoucherSigner.selector, "InvalidVoucherSigner");
        require(!router.isPaid(orderId), "still unpaid");
    }

    function testFuzz_paymentsNeverTakeOrCreditTheSurplus(uint256 orderId, uint256 amountSeed, uint256 donationSeed) public {
        uint256 amount = 1 + amountSeed % type(uint96).max;
        uint256 donation = 1 + donationSeed % type(uint128).max;
        token.mint(address(split), donation);
        PaymentRouter.PaymentOrder memory order = _order(orderId, amount);
        router.pay(order, _voucher(order));
        uint256 credited =
            split.claimable(address(0xA11CE)) + split.claimable(address(0xB0B)) + split.claimable(address(0xC4A7));
        require(credited == amount, "only the payment is credited");
        require(split.surplus() == donation, "the donation stays surplus");
        require(token.balanceOf(address(split)) == amount + donation, "balance == owed + surplus");
    }

    /// @dev A factory of this token and router.
    function _factory() private returns (AssetSplitFactory f) {
        f = new AssetSplitFactory(IERC20(address(token)), address(router), address(0xC4A7), [uint16(5000), 4000, 1000], address(this), 0, 0);
    }

    /// @dev The same device's split from a factory the router was not pointed at (same token, same router, same
    /// recipients and shares) is a real AssetSplit that would settle for the router, yet the router refuses it;
    /// so it does any other address, with or without code.
    function testFuzz_routerRefusesASplitItsFactoryDidNotCreate(uint256 orderId, uint256 amountSeed, address other)
        public
    {
        uint256 amount = 1 + amountSeed % type(uint96).max;
        vm.assume(other != address(split));
        address foreign = _factory().createSplit(keccak256("device"), address(0xA11CE), address(0xB0B));
        address[2] memory refused = [foreign, other];
        for (uint256 i; i < refused.length; ++i) {
            PaymentRouter.PaymentOrder memory order = _order(orderId, amount);
            order.split = refused[i];
            bytes memory voucher = _voucher(order);
            vm.expectRevert(abi.encodeWithSelector(PaymentRouter.TokenNotAllowed.selector, address(token), refused[i]));
            router.pay(order, voucher);
        }
        require(token.balanceOf(foreign) == 0 && !router.isPaid(orderId), "nothing paid");
        // The factory's own split of the device pays.
        router.pay(_order(orderId, amount), _voucher(_order(orderId, amount)));
        require(token.balanceOf(address(split)) == amount, "the device's split is paid");
    }
}
